"""The column_rename fallback: outside the frames renamed at entry (records: ``row["old"]``,
``float(row.get("old"))``; numpy structured arrays; frames a function loads itself) every remaining string
constant equal to the old name that is used as a column key, or passed to a call beside the frame or record it
names (``helper(row, "old")``), becomes the new name in its original quote style; so does a module-level
``NAME = "old"`` used that way. Docstrings, comments and other strings that happen to match are left alone."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from libs.python_source.column_reads import expression_root
from libs.python_source.literals import literal_like
from libs.python_source.source_text import Replacement, SourceText
from services.repairer.strategies.call_arguments import call_arguments, is_text
from services.repairer.strategies.frame_entry_renames import Covered
from services.repairer.strategies.module_index import ModuleIndex, scope_nodes


def literal_replacements(
    module: ModuleIndex, text: SourceText, old: str, new: str, covered: Covered
) -> Iterator[Replacement]:
    """The old name's uncovered column keys, helper arguments and string constants, renamed."""
    covered_names = covered.names.get(old, set())
    targets: dict[int, ast.Constant] = {}
    for key in module.keys(old):
        if id(key.node) in covered.nodes or module.container_of.get(id(key.node)) in covered_names:
            continue
        targets[id(key.node)] = key.node
    holders = {name for name, constant in module.strings.items() if constant.value == old} - covered_names
    for nodes in scope_nodes(module):
        keyed = _keyed_names(nodes, module.pandas_alias)
        for node in nodes:
            if id(node) in covered.nodes:
                continue
            if isinstance(node, ast.Call):
                for argument in call_arguments(node):
                    beside = _beside_record(node, argument, keyed) or _is_key_argument(node, argument)
                    if is_text(argument, old) and beside:
                        targets[id(argument)] = argument  # type: ignore[assignment]
                    elif isinstance(argument, ast.Name) and argument.id in holders and beside:
                        targets[id(module.strings[argument.id])] = module.strings[argument.id]
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name) and node.slice.id in holders:
                targets[id(module.strings[node.slice.id])] = module.strings[node.slice.id]
    for node in sorted(targets.values(), key=lambda node: (node.lineno, node.col_offset)):
        if id(node) in covered.holders:
            continue
        start, end = text.span(node)
        segment = text.segment(node)
        plain = segment[1:-1] == old and segment[:1] == segment[-1:]
        yield Replacement(start, end, literal_like(new, segment if plain else ""))


def _keyed_names(nodes: list[ast.AST], pandas: str | None) -> frozenset[str]:
    """Names a scope uses as a record or frame: subscripted, ``.get`` / ``.pop`` receivers, loop targets, and
    names bound to a pandas call (``df = pd.read_csv(...)``)."""
    keyed: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.value, ast.Name):
            if isinstance(node, ast.Subscript) or node.attr in {"get", "pop"}:
                keyed.add(node.value.id)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) and isinstance(node.target, ast.Name):
            keyed.add(node.target.id)
        elif (
            isinstance(node, ast.Assign)
            and pandas is not None
            and expression_root(node.value) == pandas
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            keyed.add(node.targets[0].id)
    return frozenset(keyed)


def _beside_record(call: ast.Call, argument: ast.expr, keyed: frozenset[str]) -> bool:
    """Whether the call passes ``argument`` with a record or frame name (``helper(row, "c")``)."""
    return any(
        other is not argument and isinstance(other, ast.Name) and other.id in keyed for other in call_arguments(call)
    )


def _is_key_argument(call: ast.Call, argument: ast.expr) -> bool:
    """The first argument of ``.get(...)`` / ``.pop(...)``."""
    return (
        isinstance(call.func, ast.Attribute)
        and call.func.attr in {"get", "pop"}
        and bool(call.args)
        and call.args[0] is argument
    )
