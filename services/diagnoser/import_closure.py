"""The workspace files a ``python ...`` command runs: the module or script it names and every module of the
workspace it imports, directly or not (package ``__init__`` files included, since importing a module runs
them). Imports of modules outside the tree (the standard library, installed packages) are not followed."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from libs.python_source.untrusted_parsing import parse_module
from libs.workspace.named_paths import names_a_file


def command_files(tree: Path, argv: Sequence[str]) -> frozenset[str]:
    """Relative POSIX paths of the command's entry file and its workspace-local imports."""
    entry = command_entry_file(tree, argv)
    if entry is None:
        return frozenset()
    found: set[str] = set()
    pending = [entry]
    while pending:
        relpath = pending.pop()
        if relpath in found:
            continue
        found.add(relpath)
        pending.extend(_package_inits(tree, relpath))
        pending.extend(_local_imports(tree, relpath))
    return frozenset(found)


def command_entry_file(tree: Path, argv: Sequence[str]) -> str | None:
    """The workspace file a ``python ...`` command runs: ``-m package.module`` or ``script.py``."""
    arguments = list(argv)[1:]
    for index, argument in enumerate(arguments):
        if argument == "-m" and index + 1 < len(arguments):
            return module_file(tree, arguments[index + 1])
        if argument.endswith(".py") and "{" not in argument:
            return argument if names_a_file(tree / argument) else None
    return None


def module_file(tree: Path, module: str) -> str | None:
    base = PurePosixPath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if names_a_file(tree / candidate):
            return candidate.as_posix()
    return None


def _package_inits(tree: Path, relpath: str) -> list[str]:
    parents = PurePosixPath(relpath).parents
    inits = [(parent / "__init__.py").as_posix() for parent in parents if parent.as_posix() != "."]
    return [init for init in inits if names_a_file(tree / init)]


def _local_imports(tree: Path, relpath: str) -> list[str]:
    try:
        module_ast = parse_module((tree / relpath).read_bytes())  # decoded as Python decodes it (PEP 263)
    except (OSError, SyntaxError):
        return []
    package = PurePosixPath(relpath).parent.parts  # for a module and for a package's __init__ alike
    files = []
    for node in ast.walk(module_ast):
        for module in _imported_modules(node, package):
            found = module_file(tree, module)
            if found is not None:
                files.append(found)
    return files


def _imported_modules(node: ast.AST, package: tuple[str, ...]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        anchor = package[: len(package) - (node.level - 1)] if node.level > 1 else package
        base = ".".join((*anchor, *(node.module.split(".") if node.module else ())))
    else:
        base = node.module or ""
    if not base:
        return []
    return [base, *(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")]
