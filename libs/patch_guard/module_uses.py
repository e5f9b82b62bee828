"""What a module uses: the names, attributes and imports the allow-list of new code compares.

A *use* is one of three things, read on the syntax tree after alias resolution
(:mod:`libs.patch_guard.name_resolution`):

- a **name**: a builtin (``len``), or a qualified name reached through an import (``import numpy as np``
  makes ``np.where`` the name ``numpy.where``; ``from os import getenv as g`` makes ``g`` the name
  ``os.getenv``; ``f = np.where`` makes ``f`` stand for it too). An attribute chain on a module is one name,
  the whole chain (``np.random.rand`` is ``numpy.random.rand``); a name nothing binds stands for itself;
- an **attribute** on a value: every ``.name`` of a chain whose base is not a module (a local variable, a
  parameter, a call's result, a subscript, a literal): ``frame["a"].fillna(0).astype(float)`` uses the
  attributes ``fillna`` and ``astype``;
- an **import**: ``import numpy`` or ``from numpy import where``.

Bindings are not uses: local variables, parameters, functions and classes the module defines are its own,
and so are the attribute names the module gives its own objects (methods and attributes defined in a class
body, ``self.<name> = ...``), except dunder names (``__class__``...), which are always uses.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from libs.patch_guard.constructs import normalised
from libs.patch_guard.name_resolution import BINDING_NODES, Resolver, literal_getattr, resolver_of
from libs.python_source.tree_facts import kept_with
from libs.python_source.tree_walk import nodes_of, parents_of

UseKind = Literal["name", "attribute", "import"]
USE_NODES = ast.Import | ast.ImportFrom | ast.Name | ast.Attribute | ast.Call
"""The nodes a use can be on (``_UseScan._node`` finds nothing on any other)."""


@dataclass(frozen=True, order=True)
class Use:
    kind: UseKind
    name: str
    """The qualified name, the attribute name, or the imported module."""
    member: str = ""
    """For ``from module import member``: the member."""

    def describe(self) -> str:
        if self.kind == "attribute":
            return f".{self.name}"
        if self.kind == "import":
            return f"from {self.name} import {self.member}" if self.member else f"import {self.name}"
        return self.name


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def module_uses(
    tree: ast.Module, outer_locals: frozenset[str] = frozenset(), outer_imports: tuple[ast.stmt, ...] = ()
) -> dict[Use, int]:
    """Every use in ``tree`` with the first line it appears on. For a hunk parsed alone, ``outer_locals``
    are the names the rest of the hunks bind, and ``outer_imports`` the imports they make, which resolve
    the hunk's names as if they were in it. A whole module's uses are kept with its tree for the next call."""
    if outer_locals or outer_imports:
        return _first_lines(_UseScan(tree, outer_locals, outer_imports))
    return dict(kept_with(tree, "module_uses", lambda: _first_lines(_UseScan(tree, outer_locals, outer_imports))))


def _first_lines(scan: _UseScan) -> dict[Use, int]:
    found: dict[Use, int] = {}
    for use, line in scan.uses():
        found.setdefault(use, line)
    return found


def resolver_with(tree: ast.Module, outer_imports: tuple[ast.stmt, ...]) -> Resolver:
    """Alias resolution for ``tree``, with imports made elsewhere (the rest of the hunks) in scope."""
    if not outer_imports:
        return resolver_of(tree)
    return Resolver(ast.Module(body=[*outer_imports, *tree.body], type_ignores=[]))


def top_level_imports(tree: ast.Module) -> tuple[ast.stmt, ...]:
    return tuple(node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom))


def bound_names(tree: ast.AST) -> frozenset[str]:
    """Every name ``tree`` binds other than by an import (assignments, parameters, definitions, loop and
    ``with`` targets...): an import's name is resolved, never a local."""
    names: set[str] = set()
    for node in nodes_of(tree, BINDING_NODES):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
    return frozenset(names)


def own_attribute_names(tree: ast.AST) -> frozenset[str]:
    """Attribute names the module gives its own objects: what a class body defines or assigns, and
    ``self.<name> = ...``; never a dunder name."""
    names: set[str] = set()
    for node in nodes_of(tree, ast.ClassDef | ast.Attribute):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(statement.name)
                elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
                    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                    names.update(target.id for target in targets if isinstance(target, ast.Name))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            names.add(node.attr)
    return frozenset(name for name in names if not is_dunder(name))


class _UseScan:
    def __init__(self, tree: ast.Module, outer_locals: frozenset[str], outer_imports: tuple[ast.stmt, ...]) -> None:
        self.tree = tree
        self.resolver = resolver_with(tree, outer_imports)
        self.outer_locals = outer_locals - set(self.resolver.aliases)
        self.own_attributes = own_attribute_names(tree)
        self.parents = parents_of(tree)

    def uses(self) -> Iterator[tuple[Use, int]]:
        for node in nodes_of(self.tree, USE_NODES):
            line = getattr(node, "lineno", 0)
            for use in self._node(node):
                yield use, line

    def _node(self, node: ast.AST) -> Iterator[Use]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Use("import", alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                yield Use("import", module, alias.name)
        elif isinstance(node, ast.Name):
            yield from self._name(node)
        elif isinstance(node, ast.Attribute):
            yield from self._attribute(node)
        elif isinstance(node, ast.Call) and literal_getattr(node) is not None:
            for qualified in self.resolver.qualified(node):
                yield Use("name", normalised(qualified))

    def _name(self, node: ast.Name) -> Iterator[Use]:
        if not isinstance(node.ctx, ast.Load) or self._is_base_of_attribute(node) or node.id in self.outer_locals:
            return
        qualified = self.resolver.qualified(node)
        if qualified:
            yield from (Use("name", normalised(name)) for name in sorted(qualified))
        elif not self._is_local(node.id):
            yield Use("name", node.id)

    def _attribute(self, node: ast.Attribute) -> Iterator[Use]:
        qualified = self._chain_names(node)
        if qualified:
            if not self._is_base_of_attribute(node):
                yield from (Use("name", normalised(name)) for name in sorted(qualified))
            return
        if isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return  # self.<name> = ...: the module binds its own attribute
        if is_dunder(node.attr) or node.attr not in self.own_attributes:
            yield Use("attribute", node.attr)

    def _chain_names(self, node: ast.Attribute) -> set[str]:
        """The qualified names of a chain whose base is a module (or any name the module does not bind)."""
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and base.id in self.outer_locals:
            return set()
        return self.resolver.qualified(node)

    def _is_local(self, name: str) -> bool:
        return name in self.resolver.local or name in self.outer_locals

    def _is_base_of_attribute(self, node: ast.expr) -> bool:
        parent = self.parents.get(node)
        return isinstance(parent, ast.Attribute) and parent.value is node
