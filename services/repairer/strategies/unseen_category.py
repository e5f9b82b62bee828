"""unseen_category: map a categorical column's values unseen in training to the workspace's declared default.

Where the column is read (``frame["c"]``) and used with a known set of categories, the site changes so a
value outside that set behaves like the default category:

- ``R.map(M)`` with ``M`` a module-level dict   -> ``R.map(lambda value: M.get(value, M["<default>"]))``
- ``M[R]``, or ``M[v]`` in a comprehension ``for v in R``  -> ``M.get(R, M["<default>"])``
- ``f(R, CATS)`` / ``pd.Categorical(R, categories=CATS)`` with ``CATS`` a module-level tuple/list of
  strings (one-hot loops, categoricals) -> ``R`` becomes ``np.where(np.isin(R, CATS), R, "<default>")`` in a
  numpy module, ``R.where(R.isin(CATS), "<default>")`` in a pandas one.

Refused without a declared default for the column, or when the default is not one of the known categories.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from contracts.catalogue import RepairStrategy, answers
from libs.python_source.column_reads import column_reads, module_parents
from libs.python_source.definitions import dict_literals, string_sequences, string_values
from libs.python_source.imports import module_alias
from libs.python_source.literals import literal_like
from libs.python_source.source_text import Replacement, SourceText, apply_replacements
from services.repairer.repair_context import RepairContext
from services.repairer.strategies.outcome import FileEdit, MultiFileEdit, StrategyRefusal, multi_file_edit

STRATEGY = RepairStrategy.UNSEEN_CATEGORY
ANSWERS = answers(STRATEGY)
NEEDS = ("unseen_categories", "categorical_default")

Comprehension = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


class _UnknownDefault(ValueError):
    pass


def propose(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    defaults = {
        column: context.categorical_defaults[column]
        for column in context.hints.unseen_categories
        if column in context.categorical_defaults
    }
    edits: list[FileEdit] = []
    for module in context.permitted_modules():
        path, source, tree = module.path, module.source, module.tree
        try:
            replacements = list(_module_replacements(tree, SourceText(source), defaults))
        except _UnknownDefault as error:
            return _refuse(str(error))
        if replacements:
            edits.append(FileEdit(path=path, old_text=source, new_text=apply_replacements(source, replacements)))
    if not edits:
        return _refuse(f"no permitted file maps {', '.join(sorted(defaults))} through a known set of categories")
    summary = ", ".join(f"{column} -> {default!r}" for column, default in sorted(defaults.items()))
    return multi_file_edit(STRATEGY, edits, rationale=f"values unseen in training now map to the default ({summary})")


def _module_replacements(tree: ast.Module, text: SourceText, defaults: dict[str, Any]) -> Iterator[Replacement]:
    parents = module_parents(tree)
    dicts, sequences = dict_literals(tree), string_sequences(tree)
    numpy, pandas = module_alias(tree, "numpy"), module_alias(tree, "pandas")
    for column, default in defaults.items():
        for read in column_reads(tree, column, parents):
            if not read.by_constant:
                continue
            node, parent = read.node, parents.get(read.node)
            segment = text.segment(node)
            written = literal_like(default, text.segment(node.slice))
            if isinstance(parent, ast.Attribute) and parent.attr == "map":
                call = parents.get(parent)
                mapping = _dict_argument(call, dicts)
                if mapping is not None:
                    _check_default(default, dicts[mapping], mapping)
                    fallback = f"{mapping}[{written}]"
                    start, end = text.span(call.args[0])  # type: ignore[union-attr]
                    yield Replacement(start, end, f"lambda value: {mapping}.get(value, {fallback})")
                    continue
            if isinstance(parent, ast.Subscript) and parent.slice is node and _dict_name(parent.value, dicts):
                yield _get_with_default(text, parent, segment, default, written, dicts)
                continue
            if isinstance(parent, ast.comprehension) and parent.iter is node and isinstance(parent.target, ast.Name):
                yield from _comprehension_lookups(text, parents[parent], parent.target.id, default, written, dicts)
                continue
            if isinstance(parent, ast.Call) and node in parent.args:
                categories = _categories_argument(parent, node, sequences)
                if categories is not None:
                    _check_default(default, sequences[categories], categories)
                    start, end = text.span(node)
                    if numpy is not None:
                        wrapped = f"{numpy}.where({numpy}.isin({segment}, {categories}), {segment}, {written})"
                    elif pandas is not None:
                        wrapped = f"{segment}.where({segment}.isin({categories}), {written})"
                    else:
                        continue
                    yield Replacement(start, end, wrapped)


def _comprehension_lookups(
    text: SourceText, comprehension: ast.AST, variable: str, default: Any, written: str, dicts: dict[str, ast.Dict]
) -> Iterator[Replacement]:
    assert isinstance(comprehension, Comprehension)
    elements = [comprehension.key, comprehension.value] if isinstance(comprehension, ast.DictComp) else []
    elements = elements or [comprehension.elt]  # type: ignore[union-attr]
    for element in elements:
        for node in ast.walk(element):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.slice, ast.Name)
                and node.slice.id == variable
                and _dict_name(node.value, dicts)
            ):
                yield _get_with_default(text, node, variable, default, written, dicts)


def _get_with_default(
    text: SourceText, lookup: ast.Subscript, key: str, default: Any, written: str, dicts: dict[str, ast.Dict]
) -> Replacement:
    mapping = lookup.value.id  # type: ignore[attr-defined]
    _check_default(default, dicts[mapping], mapping)
    start, end = text.span(lookup)
    return Replacement(start, end, f"{mapping}.get({key}, {mapping}[{written}])")


def _dict_argument(call: ast.AST | None, dicts: dict[str, ast.Dict]) -> str | None:
    if isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords and _dict_name(call.args[0], dicts):
        return call.args[0].id  # type: ignore[attr-defined]
    return None


def _dict_name(node: ast.expr, dicts: dict[str, ast.Dict]) -> bool:
    return isinstance(node, ast.Name) and node.id in dicts


def _categories_argument(call: ast.Call, read: ast.expr, sequences: dict[str, ast.expr]) -> str | None:
    others = [arg for arg in call.args if arg is not read] + [kw.value for kw in call.keywords]
    names = [arg.id for arg in others if isinstance(arg, ast.Name) and arg.id in sequences]
    return names[0] if len(names) == 1 else None


def _check_default(default: Any, known: ast.expr, name: str) -> None:
    if default not in string_values(known):
        raise _UnknownDefault(f"the declared default {default!r} is not one of the categories of {name}")


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)
