"""The candidate's Python modules as a package: each file parsed once, and where an imported name comes from
(``from .parsing import parse_amount``, ``from pkg.columns import SUBJECT``, ``from . import parsing``,
``import pkg.parsing as parsing``), resolved to a file of the candidate tree. Only the tree is read; a module
outside it (the standard library, an installed package) resolves to nothing."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from libs.python_source.tree_walk import parents_of
from libs.python_source.untrusted_parsing import parse_module
from services.repairer.repair_context import RepairContext


@dataclass
class ParsedModule:
    path: str
    source: str
    tree: ast.Module
    parents: Mapping[ast.AST, ast.AST] = field(default_factory=dict)

    def function(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """A top-level function of the module by name (the last definition wins, as when the module runs)."""
        found = None
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                found = node
        return found


class PackageModules:
    def __init__(self, context: RepairContext) -> None:
        self.context = context
        self._files = set(context.candidate.python_files())
        self._parsed: dict[str, ParsedModule | None] = {}

    def permitted(self, path: str) -> bool:
        return self.context.editable(path)

    def module(self, path: str) -> ParsedModule | None:
        """The candidate's Python file at ``path``, parsed; None when missing or not Python."""
        if path not in self._parsed:
            source = self.context.candidate.read(path) if path in self._files else None
            parsed = None
            if source is not None:
                try:
                    tree = parse_module(source)
                except SyntaxError:
                    tree = None
                if tree is not None:
                    parsed = ParsedModule(path, source, tree, parents_of(tree))
            self._parsed[path] = parsed
        return self._parsed[path]

    def unread(self) -> dict[str, str]:
        """Each permitted Python file this package has no module for, with why: the repairer cannot read it (a
        declared encoding other than UTF-8, bytes that are not text) or it does not parse."""
        unread: dict[str, str] = {}
        for path in self.context.permitted_files():
            if self.module(path) is None:
                reason = self.context.candidate.unreadable_reason(path)
                unread[path] = reason or "it does not parse"
        return unread

    def python_files(self) -> list[str]:
        """Every Python file of the candidate tree, permitted or not (code anywhere may build an object)."""
        return sorted(self._files)

    def permitted_modules(self) -> list[ParsedModule]:
        return [module for path in self.context.permitted_files() if (module := self.module(path)) is not None]

    def imported_name(self, importer: ParsedModule, local: str) -> tuple[ParsedModule, str] | None:
        """The module of the tree and the name in it that ``local`` is imported as in ``importer``
        (``from .parsing import parse_amount as local``)."""
        for node in importer.tree.body:
            if not isinstance(node, ast.ImportFrom):
                continue
            for alias in node.names:
                if (alias.asname or alias.name) != local:
                    continue
                target = self._module_path(importer.path, node.level, node.module)
                module = self.module(target) if target is not None else None
                if module is not None:
                    return module, alias.name
        return None

    def imported_module(self, importer: ParsedModule, local: str) -> ParsedModule | None:
        """The module of the tree bound to ``local`` by ``from . import parsing`` or
        ``import pkg.parsing as parsing``."""
        for node in importer.tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == local:
                        dotted = f"{node.module}.{alias.name}" if node.module else alias.name
                        target = self._module_path(importer.path, node.level, dotted)
                        if target is not None and (module := self.module(target)) is not None:
                            return module
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname == local:
                        target = self._module_path(importer.path, 0, alias.name)
                        if target is not None and (module := self.module(target)) is not None:
                            return module
        return None

    def _module_path(self, importer: str, level: int, dotted: str | None) -> str | None:
        if level:
            base = PurePosixPath(importer).parent
            for _ in range(level - 1):
                base = base.parent
        else:
            base = PurePosixPath("")
        parts = [part for part in (dotted or "").split(".") if part]
        stem = base.joinpath(*parts) if parts else base
        for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
            candidate = candidate.removeprefix("./")
            if candidate in self._files:
                return candidate
        return None
