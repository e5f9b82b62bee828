"""Forbidden constructs found on a module's syntax tree, never in its text.

A comment or a string that says ``eval`` is not a call to ``eval``; ``e = eval`` is a use of ``eval``
even if ``e`` is called three functions later. Every *use* of a forbidden name counts (a call, an alias,
a default argument, a list element), after alias resolution (see :mod:`libs.patch_guard.name_resolution`).
On top of names: ``open`` and friends with a write, append, create or update mode (or a mode the code
computes), methods that write or delete files on any object, ``.rename``/``.replace`` on what is visibly a
path (:mod:`libs.patch_guard.path_values`), ``getattr`` with a computed name, attributes that reach
interpreter internals (also when a string names the dunder ones: a field path ``string.Formatter``
walks, an expression ``DataFrame.query`` evaluates), star imports (they hide which names exist), and
attribute chains that reach a dangerous module through another one (``logging.os.system``); attribute names
like ``.system`` or ``.popen`` on any object, and ``os`` passed around as a value, because a module handed to
a function travels under a name resolution cannot follow.

A patch is judged by the constructs it *adds*: :func:`new_constructs` compares the file after the patch
with the file before, construct by construct, so a repair next to existing code is not blamed for it.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Collection, Iterator

from pydantic import BaseModel, ConfigDict

from libs.patch_guard.constructs import (
    DANGEROUS_ATTRIBUTES,
    ESCAPE_ATTRIBUTES,
    OPENERS,
    PATH_WRITE_KEYWORDS,
    PATH_WRITE_METHODS,
    WRITE_METHODS,
    Category,
    forbidden_category,
    normalised,
)
from libs.patch_guard.name_resolution import literal_getattr, resolver_of
from libs.patch_guard.path_values import PathValues
from libs.python_source.tree_facts import kept_with
from libs.python_source.tree_walk import nodes_of, parents_of

REEXPORTED_MODULES = frozenset(
    {"os", "posix", "sys", "subprocess", "builtins", "__builtins__", "importlib", "socket", "shutil", "ctypes"}
)
"""Modules other modules commonly import, so ``anything.os.system`` reaches ``os.system``."""
FORMAT_FIELD_ATTRIBUTE = re.compile(r"\{[^{}]*?\.(\w+)")
"""An attribute in a ``str.format`` field: ``"{0.__globals__}".format(f)`` reads it."""
NAMED_IN_TEXT = re.compile(r"(?<![A-Za-z0-9_])(__\w+?__)(?![A-Za-z0-9_])")
"""An interpreter-internal name inside a string: a field path ``string.Formatter().get_field("0.__globals__")``
walks, an expression ``frame.query("@__import__('os')...")`` evaluates."""
FILE_MODE = re.compile(r"^[rwxabtU+]{1,5}$")
WRITING_MODE_CHARACTERS = frozenset("wax+")
PATH_MOVING_METHODS = frozenset({"rename", "replace"})
"""File moves on a ``pathlib.Path``, value operations on a Series or a string: refused on a path receiver."""
SCANNED_NODES = ast.Import | ast.ImportFrom | ast.Name | ast.Attribute | ast.Call | ast.Constant
"""The nodes a forbidden construct can be on (``_ModuleScan._node`` finds nothing on any other)."""


class ConstructFinding(BaseModel):
    model_config = ConfigDict(frozen=True)

    category: Category
    description: str
    line: int

    @property
    def key(self) -> tuple[str, str]:
        return self.category, self.description


def forbidden_constructs(tree: ast.AST, categories: Collection[Category]) -> list[ConstructFinding]:
    """Every forbidden construct of ``tree`` in the given categories, in source order. The tree is scanned once
    (every category: the scan does not read them), and the scan kept with it for the next call."""
    scanned = kept_with(tree, "forbidden_constructs", lambda: tuple(_ModuleScan(tree).findings()))
    findings = [finding for finding in scanned if finding.category in categories]
    return sorted(findings, key=lambda finding: (finding.line, finding.description))


def new_constructs(before: list[ConstructFinding], after: list[ConstructFinding]) -> list[ConstructFinding]:
    """The findings of ``after`` that ``before`` does not have as many times."""
    remaining = Counter(finding.key for finding in before)
    added: list[ConstructFinding] = []
    for finding in after:
        if remaining[finding.key] > 0:
            remaining[finding.key] -= 1
        else:
            added.append(finding)
    return added


class _ModuleScan:
    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self.resolver = resolver_of(tree)
        self.paths = PathValues(tree, self.resolver)
        self.parents = parents_of(tree)

    def findings(self) -> Iterator[ConstructFinding]:
        for node in nodes_of(self.tree, SCANNED_NODES):
            line = getattr(node, "lineno", 0)
            for category, description in self._node(node):
                yield ConstructFinding(category=category, description=description, line=line)

    def _node(self, node: ast.AST) -> Iterator[tuple[Category, str]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from self._named(alias.name, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            yield from self._import_from(node)
        elif isinstance(node, ast.Name):
            yield from self._name(node)
        elif isinstance(node, ast.Attribute):
            if node.attr in ESCAPE_ATTRIBUTES:
                yield "interpreter_state", f"attribute {node.attr}"
            chain = list(self._chain(node)) if self._chain_top(node) else []
            yield from chain
            if node.attr in DANGEROUS_ATTRIBUTES and not chain:
                yield DANGEROUS_ATTRIBUTES[node.attr], f"attribute .{node.attr}"
        elif isinstance(node, ast.Call):
            yield from self._call(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for match in FORMAT_FIELD_ATTRIBUTE.finditer(node.value):
                if match.group(1) in ESCAPE_ATTRIBUTES:
                    yield "interpreter_state", f"format field reaching {match.group(1)}"
            for name in sorted({match.group(1) for match in NAMED_IN_TEXT.finditer(node.value)}):
                if name in ESCAPE_ATTRIBUTES:
                    yield "interpreter_state", f"string naming {name}"

    def _import_from(self, node: ast.ImportFrom) -> Iterator[tuple[Category, str]]:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                yield "interpreter_state", f"from {module} import *"
            elif node.level == 0 and node.module:
                construct = f"from {module} import {alias.name}"
                specific = list(self._named(f"{node.module}.{alias.name}", construct))
                yield from specific or self._named(node.module, construct)

    def _name(self, node: ast.Name) -> Iterator[tuple[Category, str]]:
        if node.id == "__builtins__":
            yield "interpreter_state", "__builtins__"
            return
        if not isinstance(node.ctx, ast.Load) or not self._chain_top(node):
            return
        parent = self.parents.get(node)
        if node.id == "getattr" and node.id not in self.resolver.local:
            if not (isinstance(parent, ast.Call) and parent.func is node and literal_getattr(parent)):
                yield "interpreter_state", "getattr with a computed attribute name"
            return
        for qualified in self.resolver.qualified(node):
            found = list(self._named(qualified, qualified))
            yield from found
            if not found and normalised(qualified) in REEXPORTED_MODULES and not self._bound_or_looked_up(node):
                yield "interpreter_state", f"module {qualified} passed as a value"

    def _bound_or_looked_up(self, node: ast.Name) -> bool:
        """``node`` is the value of a plain assignment (which resolution follows) or the object of a
        ``getattr`` with a literal name (which resolution reads)."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.Assign | ast.AnnAssign | ast.NamedExpr) and parent.value is node:
            return True
        return isinstance(parent, ast.Call) and literal_getattr(parent) is not None and parent.args[0] is node

    def _chain(self, node: ast.Attribute) -> Iterator[tuple[Category, str]]:
        for qualified in self.resolver.qualified(node):
            yield from self._named(qualified, qualified)
            yield from self._through(qualified, first=1)
        if tail := _attribute_tail(node):
            yield from self._through(tail, first=0)

    def _through(self, chain: str, first: int) -> Iterator[tuple[Category, str]]:
        """Forbidden names reached through another object: ``logging.os.system``, ``f().os.system``."""
        parts = normalised(chain).split(".")
        for start in range(first, len(parts) - 1):
            if parts[start] in REEXPORTED_MODULES:
                yield from self._named(".".join(parts[start:]), f"{chain} (through {parts[start]})")

    def _call(self, node: ast.Call) -> Iterator[tuple[Category, str]]:
        if literal_getattr(node) is not None:
            for qualified in self.resolver.qualified(node):
                yield from self._named(qualified, qualified)
        called = {normalised(name) for name in self.resolver.qualified(node.func)}
        if called & OPENERS:
            writes = _open_writes(_mode_argument(node, position=1))
            if writes:
                yield "file_write", f"{sorted(called & OPENERS)[0]}(..., {writes})"
        elif isinstance(node.func, ast.Attribute):
            yield from _method_call(node, node.func.attr)
            if node.func.attr in PATH_MOVING_METHODS and self.paths.is_path(node.func.value):
                yield "file_write", f".{node.func.attr}() on a path"

    def _named(self, qualified: str, construct: str) -> Iterator[tuple[Category, str]]:
        category = forbidden_category(normalised(qualified))
        if category is not None:
            yield category, construct

    def _chain_top(self, node: ast.expr) -> bool:
        parent = self.parents.get(node)
        return not (isinstance(parent, ast.Attribute) and parent.value is node)


def _method_call(node: ast.Call, method: str) -> Iterator[tuple[Category, str]]:
    if method in WRITE_METHODS:
        yield "file_write", f".{method}()"
    elif method in PATH_WRITE_METHODS and (
        node.args or any(keyword.arg in PATH_WRITE_KEYWORDS or keyword.arg is None for keyword in node.keywords)
    ):
        yield "file_write", f".{method}(<destination>)"
    elif method == "open":
        mode = _mode_argument(node, position=0)
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and not FILE_MODE.match(mode.value):
            return  # Image.open("x.png"): a path, not a mode
        if not _is_keyword_mode(node) and not isinstance(mode, ast.Constant):
            return  # zipfile.open(name): a member, not a mode
        if writes := _open_writes(mode):
            yield "file_write", f".open({writes})"


def _mode_argument(node: ast.Call, position: int) -> ast.expr | None:
    """The mode argument of an ``open``-like call, ``ast.Starred`` when it cannot be told."""
    for keyword in node.keywords:
        if keyword.arg == "mode":
            return keyword.value
        if keyword.arg is None:
            return ast.Starred(value=keyword.value, ctx=ast.Load())
    for index, argument in enumerate(node.args):
        if isinstance(argument, ast.Starred):
            return argument
        if index == position:
            return argument
    return None


def _is_keyword_mode(node: ast.Call) -> bool:
    return any(keyword.arg in ("mode", None) for keyword in node.keywords)


def _open_writes(mode: ast.expr | None) -> str | None:
    """How an open mode writes (``'w'``, ``a computed mode``), or None for a read."""
    if mode is None:
        return None
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return repr(mode.value) if WRITING_MODE_CHARACTERS & set(mode.value) else None
    return "a computed mode"


def _attribute_tail(node: ast.Attribute) -> str:
    """The attribute names of a chain whose base is not a plain name: ``f().os.system`` is ``os.system``."""
    names: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        names.append(current.attr)
        current = current.value
    return "" if isinstance(current, ast.Name) else ".".join(reversed(names))
