"""The workspace's tests that import a changed module, found from the tests' import statements (AST only;
nothing of the workspace is imported or run here)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from libs.python_source.untrusted_parsing import parse_module
from libs.workspace.named_paths import names_a_folder

DEFAULT_TEST_DIRS = ("tests",)
MAX_TEST_FILE_BYTES = 1024 * 1024
SOURCE_ROOTS = ("src",)


def module_name(relative_path: str) -> str | None:
    """``pkg/mod.py`` -> ``pkg.mod``; ``pkg/__init__.py`` -> ``pkg``; ``src/pkg/mod.py`` -> ``pkg.mod``."""
    path = PurePosixPath(relative_path)
    if path.suffix != ".py":
        return None
    parts = list(path.with_suffix("").parts)
    if parts and parts[0] in SOURCE_ROOTS:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or None


def imported_modules(source: bytes) -> set[str]:
    """Every absolute module an import statement names, with ``from a import b`` also giving ``a.b``."""
    tree = parse_module(source)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def _touches(imported: Iterable[str], module: str) -> bool:
    return any(name == module or name.startswith(f"{module}.") for name in imported)


def named_test_folders(workspace: Path, tests_template: Sequence[str]) -> list[str]:
    """Arguments of the tests command that name a folder of the workspace (``tests``); ``tests`` if none."""
    named = [
        arg for arg in tests_template if not arg.startswith("-") and "{" not in arg and names_a_folder(workspace / arg)
    ]
    return named or [name for name in DEFAULT_TEST_DIRS if names_a_folder(workspace / name)]


def _is_test_file(path: Path) -> bool:
    return path.name.startswith("test_") or path.name.endswith("_test.py")


def importing_tests(workspace: Path, folders: Sequence[str], modules: Sequence[str]) -> tuple[list[str], list[str]]:
    """(test files that import any of ``modules``, test files that could not be parsed), as workspace paths."""
    matching: list[str] = []
    unreadable: list[str] = []
    for folder in folders:
        for path in sorted((workspace / folder).rglob("*.py")):
            if not _is_test_file(path) or path.is_symlink() or not path.is_file():
                continue
            relative = path.relative_to(workspace).as_posix()
            if path.stat().st_size > MAX_TEST_FILE_BYTES:
                unreadable.append(relative)
                continue
            try:
                imported = imported_modules(path.read_bytes())
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                unreadable.append(relative)
                continue
            if any(_touches(imported, module) for module in modules):
                matching.append(relative)
    return matching, unreadable


def targeted_command(tests_template: Sequence[str], folders: Sequence[str], files: Sequence[str]) -> list[str]:
    """The tests command with its test folders replaced by ``files`` (appended when it names none)."""
    replaced: list[str] = []
    inserted = False
    for argument in tests_template:
        if argument in folders:
            if not inserted:
                replaced.extend(files)
                inserted = True
            continue
        replaced.append(argument)
    return replaced if inserted else [*replaced, *files]
