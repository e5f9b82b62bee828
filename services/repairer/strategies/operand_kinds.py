"""What kind of value an expression of a module's function holds: a pandas Series or frame, a numpy array,
or neither as far as the code shows (a number, a record's field, something not known).

Only positive evidence makes a value vectorised:

- a parameter annotated ``pd.DataFrame`` / ``pd.Series`` (``np.ndarray`` / ``NDArray``), used with an attribute
  only a pandas object has (``.loc``, ``.assign``, ``.fillna``...), or one every call of the module passes a
  vectorised value to (``_share(frame["a"], frame["b"])``, ``self._ratio(X, ...)``);
- a local every assignment of which is vectorised (``df = parcels.reindex(...)``, ``hours = np.asarray(...)``);
- a column of a frame (``df["lot_sqft"]``, ``X[denominator]``), a pandas method that keeps the value a Series
  (``.astype``, ``.fillna``...), arithmetic with one, a constructor (``pd.Series``, ``np.asarray``,
  ``np.where``), ``.to_numpy()`` / ``.values``.

A local assigned a number even once, a parameter some call gives a number, an annotation naming anything else
(``float``, ``Mapping[str, Any]``) is not vectorised: a guard written for a Series would fail on it.
"""

from __future__ import annotations

import ast
from typing import Literal

from libs.python_source.column_reads import own_nodes
from libs.python_source.imports import module_alias
from libs.python_source.untrusted_parsing import parse_expression
from services.repairer.strategies.frame_detection import FrameParameters
from services.repairer.strategies.module_index import ModuleFunction, ModuleIndex

OperandKind = Literal["pandas", "numpy", "other"]
_Pending = None
"""A name whose kind is being worked out (a local assigned from itself: ``X = X.copy()``): neither for nor
against."""

PANDAS_ONLY_ATTRIBUTES = frozenset(
    {
        "agg",
        "apply",
        "assign",
        "at",
        "cat",
        "columns",
        "drop",
        "dropna",
        "dt",
        "fillna",
        "groupby",
        "iat",
        "iloc",
        "isin",
        "isna",
        "iterrows",
        "itertuples",
        "loc",
        "mask",
        "merge",
        "notna",
        "pipe",
        "reindex",
        "reset_index",
        "select_dtypes",
        "set_index",
        "str",
        "to_numpy",
        "where",
    }
)
"""Attributes a pandas object has and a number, a string, a dict or a numpy array does not."""
PANDAS_KEEPING_METHODS = frozenset(
    {
        "abs",
        "add",
        "apply",
        "assign",
        "astype",
        "bfill",
        "clip",
        "combine_first",
        "copy",
        "cumprod",
        "cumsum",
        "diff",
        "div",
        "drop",
        "dropna",
        "ffill",
        "fillna",
        "interpolate",
        "map",
        "mask",
        "mul",
        "pow",
        "rank",
        "reindex",
        "rename",
        "replace",
        "round",
        "shift",
        "sub",
        "truediv",
        "where",
    }
)
"""Methods whose result, called on a Series or frame, is again one (reductions such as ``.sum()`` are not)."""
NUMPY_KEEPING_METHODS = frozenset({"astype", "clip", "copy", "cumsum", "flatten", "ravel", "reshape", "round"})
PANDAS_CONSTRUCTORS = frozenset({"DataFrame", "Series", "concat", "merge", "read_csv", "read_parquet", "read_json"})
PANDAS_CONVERSIONS = frozenset({"to_numeric", "to_datetime", "to_timedelta"})
"""``pd.<conversion>(x)`` is a Series when ``x`` is one."""
NUMPY_CONSTRUCTORS = frozenset(
    {
        "arange",
        "array",
        "asanyarray",
        "asarray",
        "column_stack",
        "concatenate",
        "empty",
        "empty_like",
        "full",
        "full_like",
        "hstack",
        "linspace",
        "ones",
        "ones_like",
        "stack",
        "vstack",
        "where",
        "zeros",
        "zeros_like",
    }
)
"""numpy functions whose result is an array whatever they are given (a Series included)."""
MAX_DEPTH = 6


class OperandKinds:
    """The kinds of a module's expressions, worked out on demand and remembered."""

    def __init__(self, module: ModuleIndex) -> None:
        self.module = module
        self.numpy_alias = module_alias(module.tree, "numpy")
        self.frames = FrameParameters(module)
        self._names: dict[tuple[int, str], OperandKind | None] = {}

    def function(self, qualname: str) -> ModuleFunction | None:
        return next((function for function in self.module.functions if function.qualname == qualname), None)

    def kind(self, node: ast.expr, function: ModuleFunction) -> OperandKind:
        return self._expression(node, function, 0) or "other"

    def _expression(self, node: ast.expr, function: ModuleFunction, depth: int) -> OperandKind | None:
        if depth > MAX_DEPTH:
            return "other"
        if isinstance(node, ast.Name):
            return self._name(node.id, function, depth + 1)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, function, depth)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, function, depth)
        if isinstance(node, ast.Call):
            return self._call(node, function, depth)
        if isinstance(node, ast.BinOp):
            return _either(
                self._expression(node.left, function, depth + 1), self._expression(node.right, function, depth + 1)
            )
        if isinstance(node, ast.UnaryOp):
            return self._expression(node.operand, function, depth + 1)
        return "other"

    def _subscript(self, node: ast.Subscript, function: ModuleFunction, depth: int) -> OperandKind | None:
        key = node.slice
        if isinstance(node.value, ast.Attribute) and node.value.attr in ("loc", "iloc"):
            owner = self._expression(node.value.value, function, depth + 1)
            return owner if owner != "pandas" or _has_slice(key) else "other"
        owner = self._expression(node.value, function, depth + 1)
        if owner == "pandas":
            return "other" if isinstance(key, ast.Constant) and isinstance(key.value, int) else "pandas"
        if owner == "numpy":
            return "numpy" if _has_slice(key) else "other"
        return owner

    def _attribute(self, node: ast.Attribute, function: ModuleFunction, depth: int) -> OperandKind | None:
        if isinstance(node.value, ast.Name) and node.value.id in (self.module.pandas_alias, self.numpy_alias):
            return "other"  # a module's constant (np.nan) or function, not a value
        owner = self._expression(node.value, function, depth + 1)
        if owner == "pandas":
            return "numpy" if node.attr == "values" else "pandas" if node.attr in ("str", "dt", "cat", "T") else "other"
        if owner == "numpy":
            return "numpy" if node.attr == "T" else "other"
        return owner

    def _call(self, node: ast.Call, function: ModuleFunction, depth: int) -> OperandKind | None:
        called = node.func
        if not isinstance(called, ast.Attribute):
            return "other"
        arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
        if isinstance(called.value, ast.Name) and called.value.id == self.module.pandas_alias:
            if called.attr in PANDAS_CONSTRUCTORS:
                return "pandas"
            if called.attr in PANDAS_CONVERSIONS and node.args:
                first = self._expression(node.args[0], function, depth + 1)
                return first if first != "numpy" else "other"
            return "other"
        if isinstance(called.value, ast.Name) and called.value.id == self.numpy_alias:
            if called.attr in NUMPY_CONSTRUCTORS:
                return "numpy"
            kinds = [self._expression(argument, function, depth + 1) for argument in arguments]
            return "pandas" if "pandas" in kinds else "numpy" if "numpy" in kinds else "other"
        owner = self._expression(called.value, function, depth + 1)
        accessor = isinstance(called.value, ast.Attribute) and called.value.attr in ("str", "dt", "cat")
        if owner == "pandas":
            if called.attr == "to_numpy":
                return "numpy"
            return "pandas" if accessor or called.attr in PANDAS_KEEPING_METHODS else "other"
        if owner == "numpy":
            return "numpy" if called.attr in NUMPY_KEEPING_METHODS else "other"
        return owner

    def _name(self, name: str, function: ModuleFunction, depth: int) -> OperandKind | None:
        key = (id(function.node), name)
        if key in self._names:
            return self._names[key]
        self._names[key] = _Pending
        kinds = [self._expression(value, function, depth) for value in _assigned_values(function, name)]
        if name in _parameters(function):
            kinds.append(self._parameter(name, function, depth))
        elif not kinds:
            kinds.append("other")  # a module constant, a loop variable, a builtin
        found = _agreed(kinds)
        self._names[key] = found
        return found

    def _parameter(self, name: str, function: ModuleFunction, depth: int) -> OperandKind | None:
        annotation = _annotation(function, name)
        if annotation is not None:
            return _annotation_kind(annotation)
        if self.module.pandas and _uses_pandas_attributes(function, name):
            return "pandas"
        number = self.module.index[id(function.node)]
        callers = self.frames.calls.get((number, name), [])
        if not callers:
            return "other"
        kinds = []
        for caller_number, argument in callers:
            if caller_number is None:
                return "other"  # a module-level call: its values are not followed
            kinds.append(self._expression(argument, self.module.functions[caller_number], depth + 1))
        return _agreed(kinds)


def _either(left: OperandKind | None, right: OperandKind | None) -> OperandKind | None:
    """Arithmetic of two operands: a Series if either is one, else an array if either is one."""
    if "pandas" in (left, right):
        return "pandas"
    if "numpy" in (left, right):
        return "numpy"
    return _Pending if _Pending in (left, right) else "other"


def _agreed(kinds: list[OperandKind | None]) -> OperandKind | None:
    """One kind when every known value has it; ``other`` when they disagree or one is not vectorised."""
    known = {kind for kind in kinds if kind is not _Pending}
    if not known:
        return _Pending
    return known.pop() if len(known) == 1 else "other"


def _has_slice(key: ast.expr) -> bool:
    return any(isinstance(node, ast.Slice) for node in ast.walk(key))


def _assigned_values(function: ModuleFunction, name: str) -> list[ast.expr]:
    values: list[ast.expr] = []
    for node in own_nodes(function.node):
        if isinstance(node, ast.Assign):
            if any(isinstance(target, ast.Name) and target.id == name for target in node.targets):
                values.append(node.value)
            elif any(_binds(target, name) for target in node.targets):
                values.append(ast.Constant(value=None))  # unpacked: not followed
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and _binds(node.target, name):
            values.append(node.value if node.value is not None else ast.Constant(value=None))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.With | ast.comprehension | ast.NamedExpr):
            targets = [item.optional_vars for item in node.items] if isinstance(node, ast.With) else [node.target]
            if any(target is not None and _binds(target, name) for target in targets):
                values.append(ast.Constant(value=None))
    return values


def _binds(target: ast.AST, name: str) -> bool:
    """Whether an assignment target rebinds ``name`` (``name = ...``, ``name, other = ...``; not ``name[k] = ...``)."""
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, ast.Tuple | ast.List):
        return any(_binds(element, name) for element in target.elts)
    return isinstance(target, ast.Starred) and _binds(target.value, name)


def _parameters(function: ModuleFunction) -> set[str]:
    arguments = function.node.args
    return {argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}


def _annotation(function: ModuleFunction, name: str) -> ast.expr | None:
    arguments = function.node.args
    for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        if argument.arg == name:
            return argument.annotation
    return None


def _annotation_kind(annotation: ast.expr) -> OperandKind:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return _annotation_kind(parse_expression(annotation.value))
        except SyntaxError:
            return "other"
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):  # "pd.Series | None"
        sides = {_annotation_kind(side) for side in (annotation.left, annotation.right) if not _is_none(side)}
        return sides.pop() if len(sides) == 1 else "other"
    if isinstance(annotation, ast.Subscript):
        outer = _last_name(annotation.value)
        if outer == "Optional":
            return _annotation_kind(annotation.slice)
        return "numpy" if outer == "NDArray" else "other"
    name = _last_name(annotation)
    if name in ("DataFrame", "Series"):
        return "pandas"
    return "numpy" if name in ("ndarray", "NDArray") else "other"


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _uses_pandas_attributes(function: ModuleFunction, name: str) -> bool:
    return any(
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == name
        and node.attr in PANDAS_ONLY_ATTRIBUTES
        for node in own_nodes(function.node)
    )
