"""Which column name an expression holds, and where that name is written.

A key is rarely only a literal (``frame["subject"]``). Real code holds the name in a module constant
(``SUBJECT = "subject"``, also imported from a sibling module), a class attribute (``text_column = "subject"``),
an attribute set in ``__init__`` from a constructor default (``def __init__(self, text_column="subject"):
self.text_column = text_column``, the scikit-learn convention) or, without a default, from what every
construction of the class in the package passes (``TargetRate("plan")``, ``FrequencyEncoder(["payment_method"])``
for an inherited ``__init__``: ``constructor_arguments``), a loop variable running over a column list of exactly
one name (``for c in self.columns``), a function default (``def f(frame,
column="subject")``), a local constant, or a config value (a module-level dict literal, ``COLUMNS["text"]``,
or a JSON/YAML/TOML file the module loads next to itself, ``SETTINGS["text_column"]``). ``ColumnNames``
follows those (one step each, chained: a default that is a module constant resolves to its string) and says
where the string is: a constant node of a module, or a key of a config file.

A name bound more than once (a constant reassigned, an attribute set to different values, a parameter
rebound in its function) resolves to nothing: the code does not hold one name there.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import yaml

from libs.python_source.column_reads import own_nodes
from libs.python_source.definitions import FunctionNode
from services.repairer.strategies.constructor_arguments import attribute_parameter, class_of, constructed_arguments
from services.repairer.strategies.package_modules import PackageModules, ParsedModule

CONFIG_SUFFIXES = (".json", ".yaml", ".yml", ".toml")
CONFIG_LOADERS = frozenset({"loads", "load", "safe_load"})


@dataclass(frozen=True)
class NameHolder:
    column: str
    kind: str
    """``literal``, ``module_constant``, ``class_attribute``, ``constructor_default``, ``constructor_argument``,
    ``function_default``, ``local_constant``, ``loop_single``, ``config_dict`` or ``config_file``."""
    path: str
    """The file the name is written in (a module, or a config file)."""
    node: ast.Constant | None = None
    """The string constant in the module at ``path``; None for a config file."""
    keys: tuple[str, ...] = ()
    """For a config file: the keys leading to the value."""


class ColumnNames:
    """Resolve column-name expressions of one module."""

    def __init__(self, module: ParsedModule, package: PackageModules | None = None) -> None:
        self.module = module
        self.package = package
        self._strings = _single_bindings(module.tree.body)
        self._configs: dict[str, tuple[str, Any] | None] = {}

    def holder(self, key: ast.AST, depth: int = 0) -> NameHolder | None:
        """Where the column name that ``key`` evaluates to is written, or None when it is not one name."""
        if depth > 4:
            return None
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return NameHolder(key.value, "literal", self.module.path, key)
        function, klass = self._scope(key)
        if isinstance(key, ast.Name):
            return self._name(key.id, function, depth)
        if isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name) and function is not None:
            if klass is not None and _receiver(function, klass) == key.value.id:
                return self._attribute(klass, key.attr, depth)
            return None
        if isinstance(key, ast.Subscript | ast.Call):
            return self._config_value(key, function, depth)
        return None

    def column(self, key: ast.AST) -> str | None:
        holder = self.holder(key)
        return holder.column if holder is not None else None

    def column_list(self, node: ast.AST, depth: int = 0) -> tuple[str, ...] | None:
        """The column names a column-list expression holds: a list or tuple of names, a module-level list
        constant (also imported), ``A + B``, ``list(A)``; None when it is not one."""
        if depth > 4:
            return None
        if isinstance(node, ast.List | ast.Tuple):
            names = [self.holder(item, depth + 1) for item in node.elts]
            if not names or any(name is None for name in names):
                return None
            return tuple(name.column for name in names if name is not None)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.column_list(node.left, depth + 1), self.column_list(node.right, depth + 1)
            return left + right if left is not None and right is not None else None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("list", "tuple")
            and len(node.args) == 1
            and not node.keywords
        ):
            return self.column_list(node.args[0], depth + 1)
        if isinstance(node, ast.Name):
            function, _ = self._scope(node)
            if function is not None and (_stores(function, node.id) or _is_parameter(function, node.id)):
                return None
            return self._module_list(node.id, depth)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            function, klass = self._scope(node)
            if function is None or klass is None or _receiver(function, klass) != node.value.id:
                return None
            values = [
                value
                for target, value in map(_assignment, klass.body)
                if isinstance(target, ast.Name) and target.id == node.attr
            ]
            assigned = any(
                isinstance(target, ast.Attribute) and target.attr == node.attr
                for method in klass.body
                if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)
                for statement in own_nodes(method)
                if isinstance(statement, ast.Assign)
                for target in statement.targets
            )
            if not values:
                return self._constructed_list(klass, node.attr, depth + 1)
            if len(values) != 1 or values[0] is None or assigned:
                return None
            return self._module_scope_list(values[0], depth + 1)
        return None

    def _module_list(self, name: str, depth: int) -> tuple[str, ...] | None:
        value = self._strings.get(name)
        if isinstance(value, ast.List | ast.Tuple | ast.BinOp | ast.Call):
            return ColumnNames(self.module, self.package)._module_scope_list(value, depth + 1)
        if value is None and self.package is not None:
            imported = self.package.imported_name(self.module, name)
            if imported is not None and imported[0].path != self.module.path:
                return ColumnNames(imported[0], self.package)._module_list(imported[1], depth + 1)
        return None

    def _module_scope_list(self, node: ast.expr, depth: int) -> tuple[str, ...] | None:
        """A column-list expression at module level (its names are module names)."""
        if isinstance(node, ast.List | ast.Tuple):
            values = [self._value(item, depth + 1) for item in node.elts]
            if not values or any(value is None for value in values):
                return None
            return tuple(value.column for value in values if value is not None)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self._module_scope_list(node.left, depth + 1)
            right = self._module_scope_list(node.right, depth + 1)
            return left + right if left is not None and right is not None else None
        if isinstance(node, ast.Name):
            return self._module_list(node.id, depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple"):
            return self._module_scope_list(node.args[0], depth + 1) if len(node.args) == 1 else None
        return None

    # scopes

    def _scope(self, node: ast.AST) -> tuple[FunctionNode | None, ast.ClassDef | None]:
        parents = self.module.parents
        function: FunctionNode | None = None
        parent = parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef) and function is None:
                function = parent
            elif isinstance(parent, ast.ClassDef):
                return function, parent if function is not None and parents.get(function) is parent else None
            parent = parents.get(parent)
        return function, None

    # names

    def _name(self, name: str, function: FunctionNode | None, depth: int) -> NameHolder | None:
        if function is not None:
            stores = _stores(function, name)
            default = _parameter_default(function, name)
            if _is_parameter(function, name):
                if default is None or stores:
                    return None
                found = self._value(default, depth + 1, outer=True)
                return _as(found, "function_default")
            if stores:
                values = [value for value in stores if value is not None]
                looped = self.loop_column(function, name) if not values else None
                if looped is not None:
                    return NameHolder(looped, "loop_single", self.module.path)
                if len(stores) == 1 and len(values) == 1:
                    found = self._value(values[0], depth + 1, outer=True)
                    return _as(found, "local_constant")
                return None
            outer = self._enclosing_function(function)
            if outer is not None:
                return self._name(name, outer, depth + 1)
        return self._module_name(name, depth)

    def _enclosing_function(self, function: FunctionNode) -> FunctionNode | None:
        parent = self.module.parents.get(function)
        while parent is not None and not isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            if isinstance(parent, ast.ClassDef):
                return None
            parent = self.module.parents.get(parent)
        return parent

    def _module_name(self, name: str, depth: int) -> NameHolder | None:
        value = self._strings.get(name)
        if value is not None:
            return _as(self._value(value, depth + 1, outer=True), "module_constant")
        if self.package is not None:
            imported = self.package.imported_name(self.module, name)
            if imported is not None:
                other, original = imported
                if other.path != self.module.path:
                    return ColumnNames(other, self.package)._module_name(original, depth + 1)
        return None

    def _value(self, node: ast.expr, depth: int, outer: bool = False) -> NameHolder | None:
        """The holder of a value expression found at module or class level (a literal or a module name)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return NameHolder(node.value, "literal", self.module.path, node)
        if isinstance(node, ast.Name):
            return self._module_name(node.id, depth + 1)
        if isinstance(node, ast.Subscript | ast.Call):
            return self._config_value(node, None, depth + 1)
        return None

    # attributes

    def _attribute(self, klass: ast.ClassDef, attribute: str, depth: int) -> NameHolder | None:
        found: list[NameHolder | None] = []
        for statement in klass.body:
            target, value = _assignment(statement)
            if isinstance(target, ast.Name) and target.id == attribute and value is not None:
                found.append(_as(self._value(value, depth + 1), "class_attribute"))
        for method in klass.body:
            if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            receiver = _receiver(method, klass)
            for node in own_nodes(method):
                if not isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                    continue
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr == attribute
                        and isinstance(target.value, ast.Name)
                        and target.value.id == receiver
                    ):
                        value = node.value if not isinstance(node, ast.AugAssign) else None
                        found.append(self._init_value(klass, method, value, depth))
        if not found:
            return self._inherited_attribute(klass, attribute, depth)
        if any(holder is None for holder in found):
            return None
        columns = {holder.column for holder in found if holder is not None}
        if len(columns) != 1:
            return None
        return found[0]

    def _init_value(
        self, klass: ast.ClassDef, method: FunctionNode, value: ast.expr | None, depth: int
    ) -> NameHolder | None:
        if value is None:
            return None
        if isinstance(value, ast.Name) and _is_parameter(method, value.id):
            default = _parameter_default(method, value.id)
            if _stores(method, value.id):
                return None
            if default is None:
                return self._constructed(klass, value.id, depth) if method.name == "__init__" else None
            kind = "constructor_default" if method.name == "__init__" else "function_default"
            return _as(self._value(default, depth + 1), kind)
        if isinstance(value, ast.Constant | ast.Subscript | ast.Call) or (
            isinstance(value, ast.Name) and not _stores(method, value.id)
        ):
            return _as(self._value(value, depth + 1), "class_attribute")
        return None

    def _inherited_attribute(self, klass: ast.ClassDef, attribute: str, depth: int) -> NameHolder | None:
        """An attribute the class's inherited ``__init__`` sets from a parameter, as the package builds it."""
        if self.package is None:
            return None
        parameter = attribute_parameter(self.package, class_of(self.module, klass), attribute)
        return self._constructed(klass, parameter, depth) if parameter is not None else None

    def _constructed(self, klass: ast.ClassDef, parameter: str, depth: int) -> NameHolder | None:
        """The one column name every construction of the class passes for ``parameter``."""
        if self.package is None:
            return None
        arguments = constructed_arguments(self.package, class_of(self.module, klass), parameter)
        if arguments is None:
            return None
        holders = [ColumnNames(site.module, self.package).holder(site.argument, depth + 1) for site in arguments]
        if any(holder is None for holder in holders) or len({h.column for h in holders if h is not None}) != 1:
            return None
        return _as(holders[0], "constructor_argument")

    def _constructed_list(self, klass: ast.ClassDef, attribute: str, depth: int) -> tuple[str, ...] | None:
        """The one column list every construction of the class passes for the parameter ``attribute`` is set
        from in the ``__init__`` the class runs (``FrequencyEncoder(["payment_method"])``)."""
        if self.package is None:
            return None
        ref = class_of(self.module, klass)
        parameter = attribute_parameter(self.package, ref, attribute)
        arguments = constructed_arguments(self.package, ref, parameter) if parameter is not None else None
        if arguments is None:
            return None
        lists = {ColumnNames(site.module, self.package).column_list(site.argument, depth + 1) for site in arguments}
        if len(lists) != 1 or None in lists:
            return None
        return lists.pop()

    def loop_column(self, function: FunctionNode, name: str) -> str | None:
        """The column a loop variable holds when its loop runs over a column list of exactly one name
        (``for c in self.columns`` with every construction passing ``["payment_method"]``)."""
        loops = [
            node
            for node in own_nodes(function)
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.target.id == name
        ]
        if len(loops) != 1 or len(_stores(function, name)) != 1:
            return None
        columns = self.column_list(loops[0].iter)
        return columns[0] if columns is not None and len(columns) == 1 else None

    # config values

    def _config_value(self, node: ast.AST, function: FunctionNode | None, depth: int) -> NameHolder | None:
        keys: list[str] = []
        while True:
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)
            ):
                keys.append(node.slice.value)
                node = node.value
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                keys.append(node.args[0].value)
                node = node.func.value
            else:
                break
        if not keys or not isinstance(node, ast.Name):  # a key that is not a string ends the walk off a Name
            return None
        if function is not None and (_stores(function, node.id) or _is_parameter(function, node.id)):
            return None
        keys.reverse()
        bound = self._strings.get(node.id)
        if isinstance(bound, ast.Dict):
            value: ast.expr | None = bound
            for key in keys:
                value = _dict_item(value, key)
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return NameHolder(value.value, "config_dict", self.module.path, value)
            return None
        if isinstance(bound, ast.Call):
            loaded = self._config_file(node.id, bound)
            if loaded is None:
                return None
            path, data = loaded
            for key in keys:
                data = data.get(key) if isinstance(data, dict) else None
            if isinstance(data, str):
                return NameHolder(data, "config_file", path, None, tuple(keys))
        return None

    def _config_file(self, name: str, call: ast.Call) -> tuple[str, Any] | None:
        """The config file a module-level ``NAME = json.loads(Path(__file__).with_name("x.json")...)`` (or
        ``yaml.safe_load``, ``tomllib.loads``, ``json.load(open(...))``) reads, next to the module."""
        if name in self._configs:
            return self._configs[name]
        self._configs[name] = None
        function = call.func
        if not (isinstance(function, ast.Attribute) and function.attr in CONFIG_LOADERS):
            return None
        files = [
            node.value
            for node in ast.walk(call)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(CONFIG_SUFFIXES)
        ]
        if len(files) != 1 or "/" in files[0] or ".." in files[0] or self.package is None:
            return None
        path = str(PurePosixPath(self.module.path).parent / files[0]).removeprefix("./")
        text = self.package.context.candidate.read(path)
        if text is None:
            return None
        try:
            if path.endswith(".json"):
                data = json.loads(text)
            elif path.endswith(".toml"):
                data = tomllib.loads(text)
            else:
                data = yaml.safe_load(text)
        except (ValueError, yaml.YAMLError, RecursionError, MemoryError):  # the pull request's file: any nesting
            return None
        self._configs[name] = (path, data)
        return self._configs[name]


INDENT = r"[^\S\n]*"
"""Whitespace but a newline: a line's indentation (a CRLF blank line's ``\\r`` included)."""


def config_value_pattern(path: str, key: str, value: str) -> str:
    """The pattern of ``key`` written with ``value`` in the config file ``path`` (JSON, TOML or YAML), the value
    (quotes included) in its group ``value``. A TOML or YAML key is looked for after a line's start and the
    whitespace of that line only (``INDENT``): each line start is one attempt over its own indentation, where
    ``\\s*`` ran from every blank line's start over all the blank lines after it (quadratic). Where the old
    pattern crossed blank lines to a key, the new one finds the same key from its own line start: the same spans."""
    key = re.escape(key)
    plain = re.escape(value)
    if path.endswith(".json"):
        return rf'"{key}"\s*:\s*(?P<value>"{plain}")'
    if path.endswith(".toml"):
        return rf'(?m)^{INDENT}["\']?{key}["\']?\s*=\s*(?P<value>"{plain}"|\'{plain}\')'
    return rf'(?m)^{INDENT}["\']?{key}["\']?\s*:\s*(?P<value>"{plain}"|\'{plain}\'|{plain})\s*(?:#.*)?$'


def config_value_span(text: str, path: str, keys: tuple[str, ...], value: str) -> tuple[int, int, str] | None:
    """Where a config file writes ``value`` under its last key (the characters of the value, quotes included,
    and its quote), when the file writes that key with that value exactly once; None otherwise."""
    matches = list(re.finditer(config_value_pattern(path, keys[-1], value), text))
    if len(matches) != 1:
        return None
    start, end = matches[0].span("value")
    written = text[start:end]
    quote = written[0] if written[:1] in ("'", '"') else ""
    return start, end, quote


def _as(holder: NameHolder | None, kind: str) -> NameHolder | None:
    if holder is None:
        return None
    if holder.kind in ("literal",):
        return NameHolder(holder.column, kind, holder.path, holder.node, holder.keys)
    return holder


def _dict_item(node: ast.expr | None, key: str) -> ast.expr | None:
    if not isinstance(node, ast.Dict):
        return None
    for item_key, value in zip(node.keys, node.values, strict=True):
        if isinstance(item_key, ast.Constant) and item_key.value == key:
            return value
    return None


def _assignment(statement: ast.stmt) -> tuple[ast.expr | None, ast.expr | None]:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        return statement.targets[0], statement.value
    if isinstance(statement, ast.AnnAssign):
        return statement.target, statement.value
    return None, None


def _single_bindings(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """Module-level names bound exactly once, by a plain assignment, to their value."""
    bound: dict[str, list[ast.expr | None]] = {}
    for statement in body:
        target, value = _assignment(statement)
        if isinstance(target, ast.Name):
            bound.setdefault(target.id, []).append(value)
        else:
            for node in ast.walk(statement) if not isinstance(statement, ast.FunctionDef | ast.ClassDef) else ():
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    bound.setdefault(node.id, []).append(None)
    return {name: values[0] for name, values in bound.items() if len(values) == 1 and values[0] is not None}


def _receiver(function: FunctionNode, klass: ast.ClassDef) -> str | None:
    decorators = {getattr(decorator, "id", getattr(decorator, "attr", "")) for decorator in function.decorator_list}
    positional = [*function.args.posonlyargs, *function.args.args]
    if "staticmethod" in decorators or not positional:
        return None
    return positional[0].arg


def _is_parameter(function: FunctionNode, name: str) -> bool:
    arguments = function.args
    names = {arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    names.update(arg.arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None)
    return name in names


def _parameter_default(function: FunctionNode, name: str) -> ast.expr | None:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = dict(zip(reversed([arg.arg for arg in positional]), reversed(arguments.defaults), strict=False))
    defaults.update(
        (arg.arg, default)
        for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if default is not None
    )
    return defaults.get(name)


def _stores(function: FunctionNode, name: str) -> list[ast.expr | None]:
    """The values ``name`` is bound to in the function's own body (None for a binding that is not a plain
    assignment: a loop target, an augmented assignment, a ``with`` target, ``global``...)."""
    found: list[ast.expr | None] = []
    plain_targets: set[int] = set()
    for node in own_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id == name:
                found.append(node.value)
                plain_targets.add(id(node.targets[0]))
        elif _rebinds(node, name, plain_targets):
            found.append(None)
    return found


def _rebinds(node: ast.AST, name: str, plain_targets: set[int]) -> bool:
    """Whether ``node`` binds ``name`` other than by a plain assignment (``global``, a loop target...)."""
    if isinstance(node, ast.Global | ast.Nonlocal):
        return name in node.names
    return (
        isinstance(node, ast.Name)
        and isinstance(node.ctx, ast.Store | ast.Del)
        and node.id == name
        and id(node) not in plain_targets
    )
