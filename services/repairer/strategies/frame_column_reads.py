"""Where a function reads an old column on a frame it derives from a parameter: a column key on the frame
(``raw["old"]``, ``raw.get("old")``), a module-level column constant used as the frame's columns
(``raw.reindex(columns=RAW_COLUMNS)``, ``raw[FEATURES]``), the old name passed beside the frame to a helper
(``self.numeric(frame, "old")``), or any read ``column_access`` finds on the frame (the name held in a class
attribute, a constructor or function default, a config value: ``X[self.text_column]``)."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from libs.python_source.column_reads import column_reads, expression_root, own_nodes
from services.repairer.strategies.call_arguments import call_arguments, is_text
from services.repairer.strategies.column_access import ColumnAccess
from services.repairer.strategies.module_index import ModuleFunction, ModuleIndex

PASS_THROUGH_CALLS = frozenset({"list", "tuple", "set", "sorted"})
"""Calls a column constant may be wrapped in and still be the columns used (``raw[list(COLUMNS)]``)."""
SERIES_ACCESSORS = frozenset({"str", "dt", "cat"})


@dataclass(frozen=True)
class FrameReads:
    read: bool
    """Whether the function reads the column (writing it alone does not count)."""
    constants: tuple[ast.Constant, ...]
    """The string constants naming the column on the frame (for a name held elsewhere, where it is written:
    a class attribute, a default, a constant of this module or another one)."""
    names: frozenset[str]
    """The module-level constants used as the frame's columns."""


def frame_reads(
    module: ModuleIndex,
    function: ModuleFunction,
    frames: frozenset[str],
    old: str,
    accesses: Sequence[ColumnAccess] = (),
) -> FrameReads:
    """How ``function`` uses the column ``old`` on ``frames`` (the names it derives from one parameter);
    ``accesses`` are the module's reads of ``old`` that ``column_access`` finds."""
    nodes = list(own_nodes(function.node))
    own = {id(node) for node in nodes}
    constants: dict[int, ast.Constant] = {}
    names: set[str] = set()
    read = False
    for key in module.keys(old):
        if id(key.node) in own and key.owner is not None and expression_root(key.owner) in frames:
            constants[id(key.node)] = key.node
            read = read or not key.stored
    holders = module.constant_names(old)
    for node in nodes:
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id in holders
            and _used_on_frame(node, frames, module.parents)
        ):
            names.add(node.id)
            read = True
        elif isinstance(node, ast.Call):
            for argument in call_arguments(node):
                if is_text(argument, old) and _beside_frame(node, argument, frames):
                    constants[id(argument)] = argument  # type: ignore[assignment]
                    read = True
    for column_read in column_reads(module.tree, old, module.parents):
        if column_read.function is not function.node or expression_root(column_read.node.value) not in frames:
            continue
        read = True
        source = column_read.source
        if column_read.by_constant:
            constants[id(column_read.node.slice)] = column_read.node.slice  # type: ignore[assignment]
        elif isinstance(source, ast.Name):
            names.add(source.id)
        elif isinstance(source, ast.Tuple | ast.List | ast.Set):
            constants.update((id(item), item) for item in source.elts if is_text(item, old))  # type: ignore[misc]
    for access in accesses:
        if access.function is function.node and expression_root(access.owner) in frames:
            read = True
            if access.holder is not None and access.holder.node is not None:
                constants.setdefault(id(access.holder.node), access.holder.node)
    return FrameReads(read, tuple(constants.values()), frozenset(names))


def _frame_chain(node: ast.AST, frames: frozenset[str]) -> bool:
    """A frame itself or a frame-valued chain on one (``frame``, ``frame.copy()``), not a column of it."""
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Attribute) and node.attr not in SERIES_ACCESSORS:
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func
        else:
            return False
    return node.id in frames


def _beside_frame(call: ast.Call, argument: ast.expr, frames: frozenset[str]) -> bool:
    """Whether the call passes ``argument`` with a frame: a method of the frame, or a helper given the frame."""
    if isinstance(call.func, ast.Attribute) and _frame_chain(call.func.value, frames):
        return True
    return any(other is not argument and _frame_chain(other, frames) for other in call_arguments(call))


def _used_on_frame(name: ast.Name, frames: frozenset[str], parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether a column constant is used as the columns of a frame: ``raw[C]``, ``raw.loc[:, C]``,
    ``raw.reindex(columns=C)``, ``helper(raw, C)``, ``C in raw.columns`` (through ``list(C)``, ``C + [...]``)."""
    child: ast.AST = name
    parent = parents.get(name)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.Subscript):
            return child is parent.slice and expression_root(parent.value) in frames
        if isinstance(parent, ast.Compare):
            return any(
                isinstance(side, ast.Attribute) and side.attr == "columns" and expression_root(side.value) in frames
                for side in (parent.left, *parent.comparators)
            )
        if isinstance(parent, ast.Call):
            if child is parent.func:
                return False
            value = child.value if isinstance(child, ast.keyword) else child
            if _beside_frame(parent, value, frames):  # type: ignore[arg-type]
                return True
            if not (isinstance(parent.func, ast.Name) and parent.func.id in PASS_THROUGH_CALLS):
                return False
        elif not isinstance(parent, ast.Tuple | ast.List | ast.Set | ast.Starred | ast.BinOp | ast.keyword):
            return False
        child, parent = parent, parents.get(parent)
    return False
