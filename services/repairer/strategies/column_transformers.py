"""Which columns a module's scikit-learn column transformers route to which transformer, and the frames the
module hands whole to a model holding one.

- Routing: ``ColumnTransformer([(name, transformer, columns), ...])`` and ``make_column_transformer(
  (transformer, columns), ...)``, with ``columns`` a column name or a column list ``ColumnNames`` resolves
  (a literal list, a constant, ``CAT + NUM``...).
- What an expression may hold (``reachable``): its own nodes, and those of what it names, one binding at a
  time: a local name's assignments in its function, a module-level name's, an attribute the class sets on
  ``self`` (``self.pipeline = Pipeline([("columns", columns), ...])``), the return values of a function of
  the module it calls (``make_model().fit(...)``).
- A frame enters a model whole at ``model.fit(X, ...)``, ``model.predict_proba(X)``... (``MODEL_METHODS``)
  when ``X`` is a parameter of the calling function and the model holds a transformer routing the column.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeGuard

from libs.python_source.column_reads import own_nodes
from libs.python_source.definitions import FunctionNode
from services.repairer.strategies.column_access import enclosing_function, parameter_names, receiver_name
from services.repairer.strategies.column_names import ColumnNames
from services.repairer.strategies.package_modules import ParsedModule

MODEL_METHODS = frozenset(
    {
        "decision_function",
        "fit",
        "fit_predict",
        "fit_transform",
        "predict",
        "predict_log_proba",
        "predict_proba",
        "score",
        "transform",
    }
)
MAX_DEPTH = 4


@dataclass(frozen=True)
class RoutedColumns:
    transformer: ast.expr
    """The transformer expression of the entry (``OneHotEncoder(...)``, a name bound to one, a pipeline)."""
    columns: tuple[str, ...]
    factory: ast.Call
    """The ``ColumnTransformer(...)`` / ``make_column_transformer(...)`` call."""


@dataclass(frozen=True)
class WholeFrame:
    function: FunctionNode
    parameter: str
    call: ast.Call


class ColumnTransformers:
    def __init__(self, module: ParsedModule, names: ColumnNames) -> None:
        self.module = module
        self.routed = list(_routed_columns(module.tree, names))

    def reachable(self, node: ast.AST) -> Iterator[ast.AST]:
        """The nodes of ``node`` and of the expressions the names, ``self`` attributes and module function
        calls in it are bound to (each binding followed once, ``MAX_DEPTH`` bindings deep)."""
        seen: set[int] = set()
        pending: list[tuple[ast.AST, int]] = [(node, 0)]
        while pending:
            current, depth = pending.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            for child in ast.walk(current):
                yield child
                if depth < MAX_DEPTH:
                    pending.extend((bound, depth + 1) for bound in self._bindings(child))

    def routes(self, model: ast.AST, column: str) -> bool:
        """Whether the expression ``model`` may hold a column transformer routing ``column``."""
        factories = {id(routed.factory) for routed in self.routed if column in routed.columns}
        return bool(factories) and any(id(node) in factories for node in self.reachable(model))

    def whole_frames(self, column: str) -> list[WholeFrame]:
        """The calls handing a parameter's frame whole to a model that routes ``column``."""
        found = []
        for node in ast.walk(self.module.tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MODEL_METHODS
                and node.args
                and isinstance(node.args[0], ast.Name)
            ):
                continue
            function = enclosing_function(node, self.module.parents)
            frame = node.args[0].id
            if function is None or frame not in parameter_names(function):
                continue
            if frame != receiver_name(function, self.module.parents) and self.routes(node.func.value, column):
                found.append(WholeFrame(function, frame, node))
        return found

    def _bindings(self, node: ast.AST) -> list[ast.AST]:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            return self._name_values(node)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return self._attribute_values(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            definition = self.module.function(node.func.id)
            if definition is not None:
                return [
                    statement.value
                    for statement in own_nodes(definition)
                    if isinstance(statement, ast.Return) and statement.value is not None
                ]
        return []

    def _name_values(self, node: ast.Name) -> list[ast.AST]:
        """What a name is assigned in its function (a parameter: nothing), else at module level."""
        function = enclosing_function(node, self.module.parents)
        if function is not None:
            if node.id in parameter_names(function):
                return []
            local = _assigned(own_nodes(function), _is_name(node.id))
            if local:
                return local
        return _assigned(iter(self.module.tree.body), _is_name(node.id))

    def _attribute_values(self, node: ast.Attribute) -> list[ast.AST]:
        """What ``self.name`` is set to in the class of the method ``node`` is in (class body and methods)."""
        function = enclosing_function(node, self.module.parents)
        klass = self.module.parents.get(function) if function is not None else None
        if function is None or not isinstance(klass, ast.ClassDef):
            return []
        receiver = receiver_name(function, self.module.parents)
        if receiver is None or not (isinstance(node.value, ast.Name) and node.value.id == receiver):
            return []
        values = _assigned(iter(klass.body), _is_name(node.attr))
        for method in klass.body:
            own = receiver_name(method, self.module.parents) if isinstance(method, FunctionNode) else None
            if isinstance(method, FunctionNode) and own is not None:
                values += _assigned(own_nodes(method), _is_attribute(own, node.attr))
        return values


def _is_name(name: str) -> Callable[[ast.expr], bool]:
    return lambda target: isinstance(target, ast.Name) and target.id == name


def _is_attribute(receiver: str, attribute: str) -> Callable[[ast.expr], bool]:
    return lambda target: (
        isinstance(target, ast.Attribute)
        and target.attr == attribute
        and isinstance(target.value, ast.Name)
        and target.value.id == receiver
    )


def _assigned(nodes: Iterator[ast.AST], matches: Callable[[ast.expr], bool]) -> list[ast.AST]:
    """The values of the plain assignments among ``nodes`` whose target ``matches``."""
    found: list[ast.AST] = []
    for node in nodes:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(matches(target) for target in targets):
            found.append(value)
    return found


def _routed_columns(tree: ast.Module, names: ColumnNames) -> Iterator[RoutedColumns]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        factory = called_name(node.func)
        if factory == "ColumnTransformer":
            spec = node.args[0] if node.args else _keyword(node, "transformers")
            entries = spec.elts if isinstance(spec, ast.List | ast.Tuple) else []
            pairs = [(entry.elts[1], entry.elts[2]) for entry in entries if _is_tuple(entry, 3)]
        elif factory == "make_column_transformer":
            pairs = [(entry.elts[0], entry.elts[1]) for entry in node.args if _is_tuple(entry, 2)]
        else:
            continue
        for transformer, selection in pairs:
            columns = _selected(names, selection)
            if columns:
                yield RoutedColumns(transformer, columns, node)


def _selected(names: ColumnNames, selection: ast.expr) -> tuple[str, ...] | None:
    holder = names.holder(selection)
    if holder is not None:
        return (holder.column,)
    return names.column_list(selection)


def called_name(function: ast.expr) -> str | None:
    """The name a call is made by: ``f`` for ``f(...)``, ``m`` for ``x.m(...)``."""
    if isinstance(function, ast.Name):
        return function.id
    if isinstance(function, ast.Attribute):
        return function.attr
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((keyword.value for keyword in call.keywords if keyword.arg == name), None)


def _is_tuple(node: ast.AST, size: int) -> TypeGuard[ast.Tuple]:
    return isinstance(node, ast.Tuple) and len(node.elts) == size
