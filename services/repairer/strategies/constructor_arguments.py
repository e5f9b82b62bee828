"""What a class's instances are built with, across the package.

An attribute set in ``__init__`` from a parameter without a default (``self.columns = list(columns)``) holds
whatever the code that builds the object passes: ``FrequencyEncoder(["payment_method"])`` in another module.
``constructed_arguments`` finds every place the package builds the class, or a subclass that keeps its
``__init__``, and the argument each passes for the parameter. The ``__init__`` may be the class's own or one it
inherits (its bases followed by name through the module and the package's imports).

It answers nothing (None) when it cannot see every construction: a subclass with its own ``__init__``, a
call that passes ``*args``/``**kwargs``, a parameter left at a default, or no construction at all.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from libs.python_source.column_reads import own_nodes
from services.repairer.strategies.package_modules import PackageModules, ParsedModule


@dataclass(frozen=True)
class ClassRef:
    module: ParsedModule
    node: ast.ClassDef


@dataclass(frozen=True)
class ConstructorArgument:
    module: ParsedModule
    """The module whose code builds the object."""
    argument: ast.expr


def attribute_parameter(package: PackageModules, klass: ClassRef, attribute: str) -> str | None:
    """The ``__init__`` parameter the instances' ``attribute`` is set from (``self.a = a``, ``list(a)``,
    ``tuple(a)``), when the ``__init__`` the class runs sets it exactly once and no other method sets it."""
    init = _init_of(package, klass)
    if init is None:
        return None
    _, method = init
    receiver = _first_parameter(method)
    assigned: list[ast.expr | None] = []
    for ref in _lineage(package, klass):
        for function in ref.node.body:
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            own = _first_parameter(function)
            for node in own_nodes(function):
                targets = node.targets if isinstance(node, ast.Assign) else []
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr == attribute
                        and isinstance(target.value, ast.Name)
                        and target.value.id == own
                    ):
                        assigned.append(node.value if function is method else None)  # type: ignore[attr-defined]
    if len(assigned) != 1 or assigned[0] is None or receiver is None:
        return None
    value = assigned[0]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple"):
        value = value.args[0] if len(value.args) == 1 and not value.keywords else value
    if not isinstance(value, ast.Name) or value.id == receiver:
        return None
    parameters = [argument.arg for argument in (*method.args.posonlyargs, *method.args.args, *method.args.kwonlyargs)]
    return value.id if value.id in parameters else None


def constructed_arguments(package: PackageModules, klass: ClassRef, parameter: str) -> list[ConstructorArgument] | None:
    """The argument every construction of the class (or of a subclass keeping its ``__init__``) passes for
    ``parameter``; None when one construction cannot be read or there is none."""
    init = _init_of(package, klass)
    if init is None:
        return None
    _, method = init
    positional = [argument.arg for argument in (*method.args.posonlyargs, *method.args.args)][1:]
    classes = [klass, *_subclasses(package, klass)]
    if any(_defines_init(ref.node) for ref in classes[1:]):
        return None
    found: list[ConstructorArgument] = []
    for module in _modules(package):
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Call) or not any(_calls(package, module, node.func, ref) for ref in classes):
                continue
            if any(isinstance(argument, ast.Starred) for argument in node.args) or any(
                keyword.arg is None for keyword in node.keywords
            ):
                return None
            bound = dict(zip(positional, node.args, strict=False))
            bound.update((keyword.arg, keyword.value) for keyword in node.keywords if keyword.arg is not None)
            if parameter not in bound:
                return None
            found.append(ConstructorArgument(module, bound[parameter]))
    return found or None


def class_of(module: ParsedModule, node: ast.ClassDef) -> ClassRef:
    return ClassRef(module, node)


# classes


def _init_of(package: PackageModules, klass: ClassRef) -> tuple[ClassRef, ast.FunctionDef] | None:
    for ref in _lineage(package, klass):
        for statement in ref.node.body:
            if isinstance(statement, ast.FunctionDef) and statement.name == "__init__":
                return ref, statement
    return None


def _defines_init(node: ast.ClassDef) -> bool:
    return any(isinstance(statement, ast.FunctionDef) and statement.name == "__init__" for statement in node.body)


def _lineage(package: PackageModules, klass: ClassRef) -> list[ClassRef]:
    """The class and its single-inheritance ancestors in the package, nearest first."""
    chain, current = [klass], klass
    while len(chain) < 8:
        bases = [base for base in current.node.bases if not _is_abc(base)]
        if len(bases) != 1:
            break
        parent = _resolve_class(package, current.module, bases[0])
        if parent is None or any(parent.node is ref.node for ref in chain):
            break
        chain.append(parent)
        current = parent
    return chain


def _is_abc(base: ast.expr) -> bool:
    return (isinstance(base, ast.Name) and base.id in ("ABC", "object")) or (
        isinstance(base, ast.Attribute) and base.attr == "ABC"
    )


def _resolve_class(package: PackageModules, module: ParsedModule, name: ast.expr) -> ClassRef | None:
    if isinstance(name, ast.Name):
        for statement in module.tree.body:
            if isinstance(statement, ast.ClassDef) and statement.name == name.id:
                return ClassRef(module, statement)
        imported = package.imported_name(module, name.id)
        if imported is not None and imported[0].path != module.path:
            return _resolve_class(package, imported[0], ast.Name(id=imported[1]))
    if isinstance(name, ast.Attribute) and isinstance(name.value, ast.Name):
        other = package.imported_module(module, name.value.id)
        if other is not None:
            return _resolve_class(package, other, ast.Name(id=name.attr))
    return None


def _subclasses(package: PackageModules, klass: ClassRef) -> list[ClassRef]:
    found: list[ClassRef] = []
    pending = [klass]
    while pending and len(found) < 32:
        parent = pending.pop()
        for module in _modules(package):
            for statement in module.tree.body:
                if not isinstance(statement, ast.ClassDef) or any(statement is ref.node for ref in found):
                    continue
                if any(_same(_resolve_class(package, module, base), parent) for base in statement.bases):
                    child = ClassRef(module, statement)
                    found.append(child)
                    pending.append(child)
    return found


def _calls(package: PackageModules, module: ParsedModule, function: ast.expr, klass: ClassRef) -> bool:
    return _same(_resolve_class(package, module, function), klass)


def _same(found: ClassRef | None, klass: ClassRef) -> bool:
    return found is not None and found.node is klass.node


def _modules(package: PackageModules) -> list[ParsedModule]:
    return [module for path in package.python_files() if (module := package.module(path)) is not None]


def _first_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    positional = [*function.args.posonlyargs, *function.args.args]
    return positional[0].arg if positional else None
