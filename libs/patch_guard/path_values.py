"""Which expressions of a module are filesystem paths, as far as the syntax tree shows.

``.rename`` and ``.replace`` are value operations on a Series or a string and file moves on a
``pathlib.Path``; the attribute name alone cannot tell them apart, the receiver can. An expression is a path
when it is a call of a path class (``Path(...)``, through aliases), a ``/`` join with a path on one side, what
a path method returns (``.with_suffix(...)``, ``.resolve()``, ``.parent``, ``.parents[0]``...), a loop
variable over ``.glob``/``.iterdir`` of a path, or a name or ``self`` attribute that is annotated with a
path class or assigned a path anywhere in the module (flow-insensitive, like alias resolution).
"""

from __future__ import annotations

import ast

from libs.patch_guard.constructs import normalised
from libs.patch_guard.name_resolution import MAX_ROUNDS, Resolver
from libs.python_source.tree_walk import nodes_of
from libs.python_source.untrusted_parsing import parse_expression

PATH_CLASSES = frozenset(
    {
        "pathlib.Path",
        "pathlib.PurePath",
        "pathlib.PosixPath",
        "pathlib.PurePosixPath",
        "pathlib.WindowsPath",
        "pathlib.PureWindowsPath",
        "zipfile.Path",
    }
)
PATH_RETURNING_METHODS = frozenset(
    {"with_suffix", "with_name", "with_stem", "resolve", "absolute", "expanduser", "joinpath", "relative_to"}
)
PATH_RETURNING_ATTRIBUTES = frozenset({"parent", "parents"})
PATH_LISTING_METHODS = frozenset({"glob", "rglob", "iterdir"})


class PathValues:
    def __init__(self, tree: ast.AST, resolver: Resolver) -> None:
        self.resolver = resolver
        self.names: set[str] = set()
        self.self_attributes: set[str] = set()
        self._annotated(tree)
        for _ in range(MAX_ROUNDS):
            before = len(self.names) + len(self.self_attributes)
            self._assigned(tree)
            if len(self.names) + len(self.self_attributes) == before:
                break

    def is_path(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Call):
            if self._is_path_class(node.func):
                return True
            function = node.func
            return (
                isinstance(function, ast.Attribute)
                and function.attr in PATH_RETURNING_METHODS
                and self.is_path(function.value)
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return self.is_path(node.left) or self.is_path(node.right)
        if isinstance(node, ast.Attribute):
            if node.attr in PATH_RETURNING_ATTRIBUTES and self.is_path(node.value):
                return True
            return _is_self(node.value) and node.attr in self.self_attributes
        if isinstance(node, ast.Subscript):
            return isinstance(node.value, ast.Attribute) and node.value.attr == "parents" and self.is_path(node.value)
        return isinstance(node, ast.Name) and node.id in self.names

    def _is_path_class(self, node: ast.expr) -> bool:
        return any(normalised(name) in PATH_CLASSES for name in self.resolver.qualified(node))

    def _annotation_is_path(self, annotation: ast.expr | None) -> bool:
        if annotation is None:
            return False
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = parse_expression(annotation.value)
            except SyntaxError:
                return False
        return any(isinstance(part, ast.expr) and self._is_path_class(part) for part in ast.walk(annotation))

    def _annotated(self, tree: ast.AST) -> None:
        for node in nodes_of(tree, ast.arg | ast.AnnAssign):
            if isinstance(node, ast.arg) and self._annotation_is_path(node.annotation):
                self.names.add(node.arg)
            elif isinstance(node, ast.AnnAssign) and self._annotation_is_path(node.annotation):
                self._bind(node.target)

    def _assigned(self, tree: ast.AST) -> None:
        for node in nodes_of(tree, ast.Assign | ast.AnnAssign | ast.NamedExpr | ast.For | ast.comprehension):
            if isinstance(node, ast.Assign) and self.is_path(node.value):
                for target in node.targets:
                    self._bind(target)
            elif (path_target := _path_target(node, self)) is not None:
                self._bind(path_target)

    def _bind(self, target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.names.add(target.id)
        elif isinstance(target, ast.Attribute) and _is_self(target.value):
            self.self_attributes.add(target.attr)


def _path_target(node: ast.AST, paths: PathValues) -> ast.expr | None:
    """The target of an annotated assignment or ``:=`` of a path, or of a loop over a path's listing."""
    if isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None and paths.is_path(node.value):
        return node.target
    if isinstance(node, ast.For | ast.comprehension) and _lists_a_path(node.iter, paths):
        return node.target
    return None


def _lists_a_path(iterable: ast.expr, paths: PathValues) -> bool:
    return (
        isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Attribute)
        and iterable.func.attr in PATH_LISTING_METHODS
        and paths.is_path(iterable.func.value)
    )


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"
