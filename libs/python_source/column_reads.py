"""Where a module reads a named column: ``frame["col"]``, ``row["col"]``, and ``record[name]`` inside a loop
or comprehension whose ``name`` runs over a literal list of column names (``for name in FLOAT_COLUMNS``).

Only reads (``Load`` context) count; an assignment ``frame["col"] = ...`` writes the column.

Also what a function does with its parameters: the name an expression starts from (``expression_root``), the
names a function derives from a parameter (``derived_names``) and whether a parameter is used as a pandas
DataFrame or as a record (``parameter_use``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from libs.python_source.definitions import FunctionNode, string_sequences, string_values
from libs.python_source.tree_walk import parents_of, walked

Comprehension = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


@dataclass(frozen=True)
class ColumnRead:
    node: ast.Subscript
    column: str
    columns: tuple[str, ...]
    """Every column this read covers: the column itself, or all the names its loop runs over."""
    function: FunctionNode | None
    """The innermost function the read is in; None at module level."""
    source: ast.expr | None = None
    """For a read inside a loop: what the loop runs over (a column-list constant's name or a literal list)."""

    @property
    def by_constant(self) -> bool:
        return isinstance(self.node.slice, ast.Constant)


def column_reads(tree: ast.Module, column: str, parents: Mapping[ast.AST, ast.AST] | None = None) -> list[ColumnRead]:
    """Every read of ``column`` in the module, in source order."""
    parents = parents_of(tree) if parents is None else parents
    sequences = string_sequences(tree)
    reads = []
    for node in walked(tree):
        if not isinstance(node, ast.Subscript) or not isinstance(node.ctx, ast.Load):
            continue
        key = node.slice
        source: ast.expr | None = None
        if isinstance(key, ast.Constant) and key.value == column:
            columns: tuple[str, ...] | None = (column,)
        elif isinstance(key, ast.Name):
            columns, source = _loop_columns(node, key.id, parents, sequences)
        else:
            columns = None
        if columns is not None and column in columns:
            reads.append(ColumnRead(node, column, columns, _enclosing_function(node, parents), source))
    return sorted(reads, key=lambda read: (read.node.lineno, read.node.col_offset))


def _loop_columns(
    node: ast.AST, name: str, parents: Mapping[ast.AST, ast.AST], sequences: Mapping[str, ast.expr]
) -> tuple[tuple[str, ...] | None, ast.expr | None]:
    """The column names ``name`` runs over at ``node``, and the loop's iterable."""
    child, parent = node, parents.get(node)
    while parent is not None:
        iterable: ast.expr | None = None
        if isinstance(parent, ast.For) and child in parent.body and _binds(parent.target, name):
            iterable = parent.iter
        elif isinstance(parent, Comprehension):
            iterable = next((g.iter for g in parent.generators if _binds(g.target, name)), None)
        if iterable is not None:
            if isinstance(iterable, ast.Name) and iterable.id in sequences:
                return string_values(sequences[iterable.id]), iterable
            if isinstance(iterable, ast.Tuple | ast.List | ast.Set):
                return string_values(iterable), iterable
            return None, None
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            return None, None
        child, parent = parent, parents.get(parent)
    return None, None


def _binds(target: ast.expr, name: str) -> bool:
    return isinstance(target, ast.Name) and target.id == name


def _enclosing_function(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> FunctionNode | None:
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
        parent = parents.get(parent)
    return parent


# What a function does with its parameters.

ParameterUse = Literal["frame", "record", "unknown"]

FRAME_ATTRIBUTES = frozenset(
    {
        "agg",
        "apply",
        "assign",
        "astype",
        "at",
        "clip",
        "columns",
        "drop",
        "drop_duplicates",
        "dropna",
        "dtypes",
        "fillna",
        "filter",
        "groupby",
        "iat",
        "iloc",
        "index",
        "isin",
        "isna",
        "iterrows",
        "itertuples",
        "join",
        "loc",
        "mask",
        "melt",
        "merge",
        "notna",
        "pipe",
        "pivot_table",
        "query",
        "reindex",
        "rename",
        "replace",
        "reset_index",
        "select_dtypes",
        "set_index",
        "shape",
        "sort_values",
        "to_csv",
        "to_numpy",
        "where",
    }
)
"""Attributes whose use marks a name as a pandas DataFrame (dicts, lists and records have none of them)."""
KEYED_ATTRIBUTES = frozenset({"get", "copy", "pop"})
"""Attributes a DataFrame shares with a dict: weaker evidence of a frame."""
SCALAR_CONVERSIONS = frozenset({"float", "int", "str", "bool", "Decimal"})


def expression_root(node: ast.AST) -> str | None:
    """The name an expression chain starts from: ``raw`` for ``raw.reindex(columns=C).copy()["c"]``."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute | ast.Subscript | ast.Starred):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        else:
            return None


def own_nodes(function: FunctionNode) -> Iterator[ast.AST]:
    """Every node of the function's body (annotations and defaults left out), not descending into nested
    function or class definitions."""
    pending: list[ast.AST] = list(reversed(function.body))
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        pending.extend(reversed(list(ast.iter_child_nodes(node))))


def derived_names(function: FunctionNode, name: str) -> frozenset[str]:
    """``name`` and the local names the function binds to an expression starting from it, directly or through
    another such name (``frame = raw.reindex(...)``, ``out = frame[COLS].copy()``)."""
    assignments = [
        (node.targets[0].id, node.value)
        for node in own_nodes(function)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    ]
    derived = {name}
    grown = True
    while grown:
        grown = False
        for target, value in assignments:
            if target not in derived and expression_root(value) in derived:
                derived.add(target)
                grown = True
    return frozenset(derived)


def parameter_use(function: FunctionNode, name: str, pandas: str | None) -> ParameterUse:
    """Whether the function uses its parameter ``name`` as a pandas DataFrame: annotated ``DataFrame``, a
    frame-only attribute (``.loc``, ``.reindex``, ``.columns``, ...), passed to a ``pandas`` function other
    than a ``read_*`` (``pandas`` is the module's alias), or subscripted / ``.get`` / ``.copy`` with no sign of
    a record. A record: annotated otherwise, or a field converted to a scalar (``float(row["c"])``)."""
    annotation = _annotation_of(function, name)
    if annotation is not None:
        return "frame" if "DataFrame" in ast.unparse(annotation) else "record"
    strong = keyed = record = False
    for node in own_nodes(function):
        if isinstance(node, ast.Attribute) and _is_name(node.value, name):
            strong = strong or node.attr in FRAME_ATTRIBUTES
            keyed = keyed or node.attr in KEYED_ATTRIBUTES
        elif isinstance(node, ast.Subscript) and _is_name(node.value, name):
            keyed = True
        elif isinstance(node, ast.Call):
            arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
            if (
                pandas is not None
                and isinstance(node.func, ast.Attribute)
                and _is_name(node.func.value, pandas)
                and not node.func.attr.startswith("read_")
                and any(_is_name(argument, name) for argument in arguments)
            ):
                strong = True
            if (
                isinstance(node.func, ast.Name)
                and node.func.id in SCALAR_CONVERSIONS
                and len(node.args) == 1
                and _is_field_of(node.args[0], name)
            ):
                record = True
    if strong:
        return "frame"
    if record:
        return "record"
    return "frame" if keyed else "unknown"


def _annotation_of(function: FunctionNode, name: str) -> ast.expr | None:
    arguments = function.args
    for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        if argument.arg == name:
            return argument.annotation
    return None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_field_of(node: ast.AST, name: str) -> bool:
    """``name[...]`` or ``name.get(...)``."""
    if isinstance(node, ast.Subscript):
        return _is_name(node.value, name)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and _is_name(node.func.value, name)
    )
