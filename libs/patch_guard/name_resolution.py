"""What a name or attribute in a module stands for, through imports and assignments.

``import os as o`` makes ``o`` stand for ``os``; ``from builtins import eval as e`` makes ``e`` stand for
``builtins.eval``; ``run = o.system`` makes ``run`` stand for ``os.system``; ``getattr(o, "system")`` is
``os.system``. Resolution is flow-insensitive (every binding of a name anywhere counts) and a name bound to
several things stands for all of them, so an alias cannot hide behind a branch. A name that nothing in the
module binds stands for itself when it is a builtin or the base of an attribute (a module the code
expects), which is what makes a hunk without its imports still readable: ``os.system(...)`` alone is
``os.system``.
"""

from __future__ import annotations

import ast
import builtins
from collections import defaultdict

from libs.python_source.tree_facts import kept_with
from libs.python_source.tree_walk import nodes_of

MAX_ROUNDS = 8
BINDING_NODES = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.arg | ast.ExceptHandler | ast.Name
BINDING_NODES |= ast.MatchAs | ast.MatchStar
"""The nodes that can bind a name other than by an import or an assignment."""
BUILTIN_NAMES = frozenset(dir(builtins)) | {"__builtins__", "__loader__", "__spec__", "__file__", "__package__"}
"""Names every module can use without binding them."""


class Resolver:
    """Qualified names of expressions in one module."""

    def __init__(self, tree: ast.AST) -> None:
        self.aliases: dict[str, set[str]] = defaultdict(set)
        self.local: set[str] = set()
        self._bind_imports(tree)
        assignments = _assignments(tree)
        self.local |= _other_bindings(tree) - {target for target, _ in assignments} - set(self.aliases)
        for _ in range(MAX_ROUNDS):
            before = sum(len(values) for values in self.aliases.values())
            for target, value in assignments:
                resolved = self.qualified(value)
                if resolved:
                    self.aliases[target] |= resolved
                else:
                    self.local.add(target)
            if sum(len(values) for values in self.aliases.values()) == before:
                break
        self.local -= set(self.aliases)

    def qualified(self, node: ast.AST, *, base: bool = False) -> set[str]:
        """Every qualified name ``node`` may stand for; empty when it is not a name, attribute or
        ``getattr`` with a literal name. A name nothing binds stands for itself when it is a builtin, or
        when it is the ``base`` of an attribute (``os`` in ``os.system``): a bare unbound ``code`` is a
        variable defined elsewhere, not the ``code`` module."""
        if isinstance(node, ast.Name):
            if node.id in self.aliases:
                return set(self.aliases[node.id])
            if node.id in self.local or not (base or node.id in BUILTIN_NAMES):
                return set()
            return {node.id}
        if isinstance(node, ast.Attribute):
            return {f"{prefix}.{node.attr}" for prefix in self.qualified(node.value, base=True)}
        if (attribute := literal_getattr(node)) is not None:
            target, name = attribute
            return {f"{prefix}.{name}" for prefix in self.qualified(target, base=True)}
        return set()

    def _bind_imports(self, tree: ast.AST) -> None:
        for node in nodes_of(tree, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname].add(alias.name)
                    else:
                        head = alias.name.split(".", 1)[0]
                        self.aliases[head].add(head)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    bound = alias.asname or alias.name
                    if node.level == 0 and node.module:
                        self.aliases[bound].add(f"{node.module}.{alias.name}")
                    else:
                        self.local.add(bound)


def resolver_of(tree: ast.AST) -> Resolver:
    """The resolution of ``tree``'s names, made once per tree: every check of a file reads the same one (a resolver
    is never changed once made)."""
    return kept_with(tree, "resolver", lambda: Resolver(tree))


def literal_getattr(node: ast.AST) -> tuple[ast.expr, str] | None:
    """(object, name) of ``getattr(object, "name")`` or ``getattr(object, "name", default)``."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and 2 <= len(node.args) <= 3
        and not node.keywords
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[0], node.args[1].value
    return None


def _assignments(tree: ast.AST) -> list[tuple[str, ast.expr]]:
    """(name, value) of every assignment of a value to a plain name, tuples unpacked pairwise."""
    pairs: list[tuple[str, ast.expr]] = []
    for node in nodes_of(tree, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr | ast.arguments):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs.extend(_pairs(target, node.value))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and node.value is not None:
            pairs.extend(_pairs(node.target, node.value))
        elif isinstance(node, ast.arguments):
            positional = [*node.posonlyargs, *node.args]
            defaults = list(zip(positional[len(positional) - len(node.defaults) :], node.defaults, strict=True))
            keyword = [(arg, default) for arg, default in zip(node.kwonlyargs, node.kw_defaults, strict=True)]
            pairs.extend((arg.arg, default) for arg, default in defaults + keyword if default is not None)
    return pairs


def _pairs(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if (
        isinstance(target, ast.Tuple | ast.List)
        and isinstance(value, ast.Tuple | ast.List)
        and len(target.elts) == len(value.elts)
    ):
        return [pair for t, v in zip(target.elts, value.elts, strict=True) for pair in _pairs(t, v)]
    return []


def _other_bindings(tree: ast.AST) -> set[str]:
    """Names bound by something other than an import or a resolvable assignment: definitions,
    parameters, loop and ``with`` targets, handlers, comprehension variables, unpacking."""
    bound: set[str] = set()
    for node in nodes_of(tree, BINDING_NODES):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
    return bound
