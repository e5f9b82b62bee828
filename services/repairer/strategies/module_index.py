"""The index of one module that the column_rename strategy works from: its functions (with the parameters
that may carry a frame), the module-level column constants, the column keys naming a column, and how a call
of the module resolves to one of its functions."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from libs.python_source.column_keys import ColumnKey, column_keys
from libs.python_source.column_reads import own_nodes
from libs.python_source.definitions import FunctionNode, dict_literals, string_sequences, string_values
from libs.python_source.imports import module_alias
from libs.python_source.tree_walk import parents_of


@dataclass(frozen=True)
class ModuleFunction:
    node: FunctionNode
    qualname: str
    owner: ast.ClassDef | None
    receiver: str | None
    """``self`` / ``cls`` of a method; None for a function or a static method."""
    static_or_class: bool
    positional: tuple[str, ...]
    """Parameters bound by position at a call, the receiver left out."""
    parameters: tuple[str, ...]
    """Parameters that may carry a frame: not the receiver, not ``*args`` / ``**kwargs``, not defaulting to None."""


class ModuleIndex:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents = parents_of(tree)
        self.pandas_alias = module_alias(tree, "pandas")
        self.pandas = self.pandas_alias is not None or any(
            isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pandas" for node in tree.body
        )
        self.functions = list(_functions(tree.body, "", None))
        self.index = {id(function.node): number for number, function in enumerate(self.functions)}
        self.top_level = {f.node.name: n for n, f in enumerate(self.functions) if f.qualname == f.node.name}
        self.methods: dict[str, dict[str, int]] = {}
        for number, function in enumerate(self.functions):
            if function.owner is not None:
                self.methods.setdefault(function.owner.name, {})[function.node.name] = number
        self.sequences: dict[str, ast.expr] = {**string_sequences(tree), **dict_literals(tree)}
        self.strings = _string_constants(tree)
        self.container_of = {
            id(item): name
            for name, value in self.sequences.items()
            for item in (value.keys if isinstance(value, ast.Dict) else value.elts)  # type: ignore[attr-defined]
        }
        self._keys: dict[str, list[ColumnKey]] = {}

    def keys(self, old: str) -> list[ColumnKey]:
        if old not in self._keys:
            self._keys[old] = column_keys(self.tree, old, self.parents)
        return self._keys[old]

    def constant_names(self, old: str) -> set[str]:
        """Module-level constants that hold ``old``: a column list or dict with it, or the string itself."""
        names = {name for name, value in self.sequences.items() if old in string_values(value)}
        return names | {name for name, constant in self.strings.items() if constant.value == old}

    def callee(self, call: ast.Call, caller: ModuleFunction | None) -> ModuleFunction | None:
        """The function of this module a call resolves to: ``name(...)``, ``self.name(...)``,
        ``cls.name(...)``, ``Class.name(...)`` (a static or class method)."""
        func = call.func
        if isinstance(func, ast.Name):
            number = self.top_level.get(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            target = func.value.id
            if caller is not None and caller.owner is not None and target == caller.receiver:
                number = self.methods.get(caller.owner.name, {}).get(func.attr)
            else:
                number = self.methods.get(target, {}).get(func.attr)
                if number is not None and not self.functions[number].static_or_class:
                    number = None
        else:
            number = None
        return None if number is None else self.functions[number]

    def arguments(self, call: ast.Call, callee: ModuleFunction) -> Iterator[tuple[str, ast.expr]]:
        """(callee parameter, argument) for the call's arguments that bind a parameter that may carry a frame."""
        for position, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred) or position >= len(callee.positional):
                break
            if callee.positional[position] in callee.parameters:
                yield callee.positional[position], argument
        for keyword in call.keywords:
            if keyword.arg is not None and keyword.arg in callee.parameters:
                yield keyword.arg, keyword.value


def module_level_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """The module's nodes outside function and class definitions."""
    pending: list[ast.AST] = list(reversed(tree.body))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield node
        pending.extend(reversed(list(ast.iter_child_nodes(node))))


def scope_nodes(module: ModuleIndex) -> Iterator[list[ast.AST]]:
    """The nodes of each scope: the module level first, then each function's own."""
    yield list(module_level_nodes(module.tree))
    for function in module.functions:
        yield list(own_nodes(function.node))


def _functions(body: Iterable[ast.AST], prefix: str, owner: ast.ClassDef | None) -> Iterator[ModuleFunction]:
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            yield _describe(statement, prefix + statement.name, owner)
            yield from _functions(statement.body, f"{prefix}{statement.name}.", None)
        elif isinstance(statement, ast.ClassDef):
            yield from _functions(statement.body, f"{prefix}{statement.name}.", statement)
        elif isinstance(statement, ast.stmt):
            yield from _functions(_child_statements(statement), prefix, owner)


def _child_statements(statement: ast.stmt) -> Iterator[ast.AST]:
    for child in ast.iter_child_nodes(statement):
        if isinstance(child, ast.stmt):
            yield child
        elif isinstance(child, ast.ExceptHandler | ast.match_case):
            yield from child.body


def _describe(node: FunctionNode, qualname: str, owner: ast.ClassDef | None) -> ModuleFunction:
    decorators = {
        decorator.id if isinstance(decorator, ast.Name) else getattr(decorator, "attr", "")
        for decorator in node.decorator_list
    }
    arguments = node.args
    positional = [argument.arg for argument in (*arguments.posonlyargs, *arguments.args)]
    receiver = positional[0] if owner is not None and "staticmethod" not in decorators and positional else None
    defaults: dict[str, ast.expr] = dict(zip(reversed(positional), reversed(arguments.defaults), strict=False))
    defaults.update(
        (argument.arg, default)
        for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if default is not None
    )
    bound = [name for name in positional if name != receiver]
    parameters = tuple(
        name
        for name in (*bound, *(argument.arg for argument in arguments.kwonlyargs))
        if not _is_none_literal(defaults.get(name))
    )
    return ModuleFunction(
        node=node,
        qualname=qualname,
        owner=owner,
        receiver=receiver,
        static_or_class=bool(decorators & {"staticmethod", "classmethod"}),
        positional=tuple(bound),
        parameters=parameters,
    )


def _string_constants(tree: ast.Module) -> dict[str, ast.Constant]:
    """Module-level names bound once, to a string constant."""
    bound: dict[str, list[ast.expr]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if isinstance(target, ast.Name):
            bound.setdefault(target.id, []).append(value)
    return {
        name: values[0]
        for name, values in bound.items()
        if len(values) == 1 and isinstance(values[0], ast.Constant) and isinstance(values[0].value, str)
    }


def _is_none_literal(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
