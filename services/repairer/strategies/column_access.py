"""Where a module reads a column's values, in the shapes real code takes:

- ``key``: ``frame[K]`` / ``row[K]``, with ``K`` anything ``ColumnNames`` resolves to the column (a literal, a
  constant, a class attribute, a constructor or function default, a config value);
- ``get``: ``row.get(K)`` / ``frame.get(K, default)``;
- ``helper``: ``helper(frame, K)`` / ``self.helper(frame, K)``, a function of the module that reads
  ``frame[name]`` with the parameter the name is passed to (``_num(df, "visits")``);
- ``loop``: ``record[name]`` in a loop or comprehension whose ``name`` runs over a column list holding it;
- ``columns``: ``frame[COLUMNS]`` with a column list holding it (``frame[NUMERIC]``, ``frame[CAT + NUM]``).

Only reads count (``frame["c"] = ...`` writes). ``owner`` is the frame or record read from; ``frame_parameter``
says which parameter of the function, if any, that frame comes in by.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from libs.python_source.column_reads import column_reads, derived_names, expression_root, parameter_use
from libs.python_source.definitions import FunctionNode
from services.repairer.strategies.column_names import ColumnNames, NameHolder
from services.repairer.strategies.package_modules import ParsedModule

AccessKind = Literal["key", "get", "helper", "loop", "columns"]
Comprehension = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


@dataclass(frozen=True)
class ColumnAccess:
    node: ast.expr
    """The expression whose value is the column (or, for ``columns``, the frame of several columns)."""
    column: str
    owner: ast.expr
    function: FunctionNode | None
    kind: AccessKind
    holder: NameHolder | None = None

    @property
    def single(self) -> bool:
        """Whether the expression holds this one column's values (not a loop over several, not a sub-frame)."""
        return self.kind in ("key", "get", "helper")


def column_accesses(module: ParsedModule, names: ColumnNames, column: str) -> list[ColumnAccess]:
    """Every read of ``column`` in the module, in source order."""
    parents = module.parents
    found: dict[int, ColumnAccess] = {}
    for read in column_reads(module.tree, column, parents):
        if read.source is not None:
            found[id(read.node)] = ColumnAccess(read.node, column, read.node.value, read.function, "loop")
    for node in ast.walk(module.tree):
        if id(node) in found:
            continue
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            holder = names.holder(node.slice)
            if holder is not None and holder.column == column and not _is_config_read(node, names):
                found[id(node)] = ColumnAccess(node, column, node.value, _function(node, parents), "key", holder)
                continue
            listed = names.column_list(node.slice)
            if listed is not None and column in listed:
                found[id(node)] = ColumnAccess(node, column, node.value, _function(node, parents), "columns")
        elif isinstance(node, ast.Call):
            access = _get_access(node, names, column, parents) or _helper_access(module, node, names, column)
            if access is not None:
                found[id(node)] = access
    return sorted(found.values(), key=lambda access: (access.node.lineno, access.node.col_offset))


def _is_config_read(node: ast.Subscript, names: ColumnNames) -> bool:
    """``SETTINGS["target"]`` itself (a config value that names a column) is not a read of that column."""
    return isinstance(node.slice, ast.Constant) and isinstance(node.value, ast.Name) and names.holder(node) is not None


def _get_access(
    call: ast.Call, names: ColumnNames, column: str, parents: Mapping[ast.AST, ast.AST]
) -> ColumnAccess | None:
    function = call.func
    if not (isinstance(function, ast.Attribute) and function.attr == "get" and 1 <= len(call.args) <= 2):
        return None
    holder = names.holder(call.args[0])
    if holder is None or holder.column != column or names.holder(call) is not None:
        return None
    return ColumnAccess(call, column, function.value, _function(call, parents), "get", holder)


def _helper_access(module: ParsedModule, call: ast.Call, names: ColumnNames, column: str) -> ColumnAccess | None:
    caller = _function(call, module.parents)
    callee = _callee(module, call, caller)
    if callee is None:
        return None
    method = isinstance(call.func, ast.Attribute) and receiver_name(callee, module.parents) is not None
    bound = bound_arguments(call, callee, method=method)
    for parameter, argument in bound.items():
        holder = names.holder(argument)
        if holder is None or holder.column != column:
            continue
        for frame_parameter in _subscripted_by(callee, parameter):
            owner = bound.get(frame_parameter)
            if owner is not None:
                return ColumnAccess(call, column, owner, caller, "helper", holder)
    return None


def _subscripted_by(function: FunctionNode, name: str) -> list[str]:
    """The parameters of ``function`` it subscripts with its parameter ``name`` (``frame[name]``)."""
    parameters = set(parameter_names(function))
    return sorted(
        {
            node.value.id
            for node in ast.walk(function)
            if isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Name)
            and node.slice.id == name
            and isinstance(node.value, ast.Name)
            and node.value.id in parameters
        }
    )


def parameter_names(function: FunctionNode) -> list[str]:
    arguments = function.args
    return [argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def bound_arguments(call: ast.Call, callee: FunctionNode, method: bool | None = None) -> dict[str, ast.expr]:
    """The call's arguments by the callee's parameter names (the receiver left out for a method call)."""
    arguments = callee.args
    positional = [argument.arg for argument in (*arguments.posonlyargs, *arguments.args)]
    if method is None:
        method = isinstance(call.func, ast.Attribute)
    if method and positional:
        positional = positional[1:]
    bound: dict[str, ast.expr] = {}
    for position, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred) or position >= len(positional):
            break
        bound[positional[position]] = argument
    for keyword in call.keywords:
        if keyword.arg is not None:
            bound[keyword.arg] = keyword.value
    return bound


def _callee(module: ParsedModule, call: ast.Call, caller: FunctionNode | None) -> FunctionNode | None:
    """The module's own function a call resolves to: ``name(...)`` (top level) or ``self.name(...)`` in a
    method of the same class (or one of its base classes in the module)."""
    function = call.func
    if isinstance(function, ast.Name):
        return module.function(function.id)
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and caller is not None:
        klass = module.parents.get(caller)
        positional = [*caller.args.posonlyargs, *caller.args.args]
        if isinstance(klass, ast.ClassDef) and positional and positional[0].arg == function.value.id:
            return _method(module, klass, function.attr)
    return None


def _method(module: ParsedModule, klass: ast.ClassDef, name: str) -> FunctionNode | None:
    """The method ``name`` the class runs: its own, or one it inherits from a base class of the same module."""
    seen: list[ast.ClassDef] = []
    current: ast.ClassDef | None = klass
    while current is not None and current not in seen:
        seen.append(current)
        for statement in current.body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) and statement.name == name:
                return statement
        bases = [base.id for base in current.bases if isinstance(base, ast.Name)]
        current = next(
            (
                statement
                for statement in module.tree.body
                if isinstance(statement, ast.ClassDef) and len(bases) == 1 and statement.name == bases[0]
            ),
            None,
        )
    return None


def _function(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> FunctionNode | None:
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
        parent = parents.get(parent)
    return parent


def enclosing_function(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> FunctionNode | None:
    return _function(node, parents)


def is_record(access: ColumnAccess, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether the owner is a record bound by a loop or a comprehension (``for row in rows: row["c"]``)."""
    root = expression_root(access.owner)
    if root is None or not isinstance(access.owner, ast.Name):
        return False
    parent = parents.get(access.node)
    while parent is not None:
        if isinstance(parent, ast.For | ast.AsyncFor) and _binds(parent.target, root):
            return True
        if isinstance(parent, Comprehension) and any(_binds(g.target, root) for g in parent.generators):
            return True
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return isinstance(parent, ast.Lambda) and any(argument.arg == root for argument in parent.args.args)
        parent = parents.get(parent)
    return False


def _binds(target: ast.AST, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(target))


def frame_parameter(access: ColumnAccess, parents: Mapping[ast.AST, ast.AST], pandas: str | None) -> str | None:
    """The parameter of the access's function whose frame the column is read from: the owner is the parameter,
    or a name the function derives from it (``out = frame[COLUMNS].copy()``). None for a record (a loop
    variable, a parameter used as a record), the receiver of a method, or an owner the function makes itself."""
    function = access.function
    if function is None or is_record(access, parents):
        return None
    root = expression_root(access.owner)
    for parameter in parameter_names(function):
        if parameter == receiver_name(function, parents):
            continue
        if root in derived_names(function, parameter) and parameter_use(function, parameter, pandas) != "record":
            return parameter
    return None


def receiver_name(function: FunctionNode, parents: Mapping[ast.AST, ast.AST]) -> str | None:
    """``self`` / ``cls`` of a method of a class; None for a function or a static method."""
    if not isinstance(parents.get(function), ast.ClassDef):
        return None
    decorators = {getattr(decorator, "id", getattr(decorator, "attr", "")) for decorator in function.decorator_list}
    positional = [*function.args.posonlyargs, *function.args.args]
    return positional[0].arg if positional and "staticmethod" not in decorators else None
