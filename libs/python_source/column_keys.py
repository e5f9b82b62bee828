"""String constants a module uses as column names.

A string constant is a column key when it is: the key of a subscript (``df["c"]``, ``row["c"]``) or an
item of a list subscript (``df[["a", "c"]]``); the first argument of ``.get(...)`` / ``.pop(...)``; an item
or dict key of the value of a column keyword (``usecols=[...]``, ``columns={...}``, ``dtype={...}``,
``subset=``, ``on=``, ...); tested for membership in ``.columns`` (``"c" in df.columns``); or an item of a
module-level tuple/list/set of strings, or a key of a module-level dict with string keys (column-list
constants). Docstrings, comments and f-string parts are never column keys.

``column_keys`` also gives what each key indexes (its owner): ``df`` for ``df["c"]``, ``df[["a", "c"]]``,
``df.get("c")``, ``"c" in df.columns`` and ``df.drop(columns=["c"])``; none for a column-list constant.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from libs.python_source.definitions import dict_literals, string_sequences
from libs.python_source.tree_walk import parents_of, walked

COLUMN_KEYWORDS = frozenset(
    {
        "usecols",
        "columns",
        "subset",
        "names",
        "on",
        "left_on",
        "right_on",
        "by",
        "index_col",
        "parse_dates",
        "id_vars",
        "value_vars",
        "dtype",
        "converters",
        "value",
    }
)
KEY_METHODS = frozenset({"get", "pop"})


@dataclass(frozen=True)
class ColumnKey:
    node: ast.Constant
    owner: ast.expr | None
    """The expression the key indexes (the frame or record); None for an item of a column-list constant or
    of a keyword of a call that is not a method (``pd.read_csv(path, usecols=[...])``)."""
    stored: bool = False
    """The key of an assignment or deletion (``df["c"] = ...``), not of a read."""


def column_key_constants(tree: ast.Module, name: str) -> list[ast.Constant]:
    """Every string constant equal to ``name`` that is used as a column key, in source order."""
    return [key.node for key in column_keys(tree, name)]


def column_keys(tree: ast.Module, name: str, parents: Mapping[ast.AST, ast.AST] | None = None) -> list[ColumnKey]:
    """Every string constant equal to ``name`` that is used as a column key, with what it indexes."""
    parents = parents_of(tree) if parents is None else parents
    constant_containers = {id(value) for value in (*string_sequences(tree).values(), *dict_literals(tree).values())}
    found = [
        ColumnKey(node, _owner(node, parents, constant_containers), _stored(node, parents))
        for node in walked(tree)
        if isinstance(node, ast.Constant) and node.value == name and _is_column_key(node, parents, constant_containers)
    ]
    return sorted(found, key=lambda key: (key.node.lineno, key.node.col_offset))


def _owner(node: ast.Constant, parents: Mapping[ast.AST, ast.AST], constants: set[int]) -> ast.expr | None:
    parent = parents.get(node)
    if isinstance(parent, ast.Subscript):
        return parent.value
    if isinstance(parent, ast.Call):
        return parent.func.value if isinstance(parent.func, ast.Attribute) else None
    if isinstance(parent, ast.Compare):
        comparator = parent.comparators[0]
        return comparator.value if isinstance(comparator, ast.Attribute) else None
    if parent is None or id(parent) in constants:
        return None
    holder = parents.get(parent)
    if isinstance(holder, ast.Subscript):
        return holder.value
    if isinstance(holder, ast.keyword):
        call = parents.get(holder)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            return call.func.value
    return None


def _stored(node: ast.Constant, parents: Mapping[ast.AST, ast.AST]) -> bool:
    subscript = parents.get(node)
    if isinstance(subscript, ast.Tuple | ast.List | ast.Set):
        subscript = parents.get(subscript)
    return isinstance(subscript, ast.Subscript) and isinstance(subscript.ctx, ast.Store | ast.Del)


def _is_column_key(node: ast.Constant, parents: Mapping[ast.AST, ast.AST], constants: set[int]) -> bool:
    parent = parents.get(node)
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return True
    if (
        isinstance(parent, ast.Call)
        and parent.args
        and parent.args[0] is node
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr in KEY_METHODS
    ):
        return True
    if isinstance(parent, ast.Compare) and _tests_columns(parent, node):
        return True
    if isinstance(parent, ast.Tuple | ast.List | ast.Set) or (
        isinstance(parent, ast.Dict) and any(key is node for key in parent.keys)
    ):
        if id(parent) in constants:
            return True
        holder = parents.get(parent)
        if isinstance(holder, ast.keyword) and holder.arg in COLUMN_KEYWORDS:
            return True
        return isinstance(holder, ast.Subscript) and holder.slice is parent
    return False


def _tests_columns(compare: ast.Compare, node: ast.Constant) -> bool:
    return (
        compare.left is node
        and len(compare.ops) == 1
        and isinstance(compare.ops[0], ast.In | ast.NotIn)
        and isinstance(compare.comparators[0], ast.Attribute)
        and compare.comparators[0].attr == "columns"
    )
