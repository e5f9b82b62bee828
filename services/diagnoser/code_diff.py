"""What changed between two extracted source trees: files, unified diff text and Python functions by AST.

Functions are compared by a normalised AST dump (no line numbers, no formatting, no comments), so a
function that was only moved or re-indented is not reported as modified.
"""

from __future__ import annotations

import ast
import copy
import difflib
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from libs.python_source.source_encoding import UnreadableSource, decode_source
from libs.python_source.untrusted_parsing import parse_module

IGNORED_DIRECTORY_NAMES = frozenset({"__pycache__", ".git", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
IGNORED_SUFFIXES = frozenset({".pyc", ".pyo"})

ChangeStatus = Literal["added", "removed", "modified"]
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


class ChangedFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    status: ChangeStatus
    is_python: bool
    added_lines: int
    removed_lines: int
    module_level_changed: bool
    """For Python files: statements outside any function (imports, constants, class bodies) differ."""


class FunctionChange(BaseModel):
    model_config = ConfigDict(frozen=True)

    file: str
    qualified_name: str
    status: ChangeStatus
    base_lines: tuple[int, int] | None
    candidate_lines: tuple[int, int] | None
    parameters: tuple[str, ...]


class CodeDiff(BaseModel):
    model_config = ConfigDict(frozen=True)

    changed_files: tuple[ChangedFile, ...]
    function_changes: tuple[FunctionChange, ...]
    unified_diff: str

    def changed_paths(self) -> list[str]:
        return [changed.path for changed in self.changed_files]


def diff_trees(base_dir: Path, candidate_dir: Path) -> CodeDiff:
    """Compare two extracted trees file by file; Python files are also compared function by function."""
    base_files = _source_files(base_dir)
    candidate_files = _source_files(candidate_dir)
    changed_files: list[ChangedFile] = []
    function_changes: list[FunctionChange] = []
    diff_chunks: list[str] = []
    for relpath in sorted(base_files.keys() | candidate_files.keys()):
        base_bytes = base_files.get(relpath)
        candidate_bytes = candidate_files.get(relpath)
        if base_bytes == candidate_bytes:
            continue
        status: ChangeStatus = "added" if base_bytes is None else "removed" if candidate_bytes is None else "modified"
        is_python = relpath.endswith(".py")
        base_text = _text(base_bytes, is_python)
        candidate_text = _text(candidate_bytes, is_python)
        if isinstance(base_text, Unshown) or isinstance(candidate_text, Unshown):
            diff_lines = list(_unshown_diff_lines(relpath, status, base_text, candidate_text))
        else:
            diff_lines = list(_unified_diff_lines(relpath, base_text, candidate_text, status))
        diff_chunks.append("".join(diff_lines))
        module_level_changed = False
        if is_python:
            base_tree = _parse(base_text)
            candidate_tree = _parse(candidate_text)
            function_changes.extend(changed_functions(relpath, base_tree, candidate_tree))
            module_level_changed = _module_level_dump(base_tree) != _module_level_dump(candidate_tree)
        changed_files.append(
            ChangedFile(
                path=relpath,
                status=status,
                is_python=is_python,
                added_lines=sum(1 for line in diff_lines[2:] if line.startswith("+")),
                removed_lines=sum(1 for line in diff_lines[2:] if line.startswith("-")),
                module_level_changed=module_level_changed,
            )
        )
    return CodeDiff(
        changed_files=tuple(changed_files),
        function_changes=tuple(function_changes),
        unified_diff="".join(diff_chunks),
    )


def changed_functions(file: str, base: ast.Module | None, candidate: ast.Module | None) -> list[FunctionChange]:
    """Functions added, removed or modified between two parsed versions of one file."""
    base_functions = dict(iter_functions(base)) if base else {}
    candidate_functions = dict(iter_functions(candidate)) if candidate else {}
    changes: list[FunctionChange] = []
    for name in sorted(base_functions.keys() | candidate_functions.keys()):
        before = base_functions.get(name)
        after = candidate_functions.get(name)
        if before is not None and after is not None and normalised_dump(before) == normalised_dump(after):
            continue
        status: ChangeStatus = "added" if before is None else "removed" if after is None else "modified"
        reference = after if after is not None else before
        assert reference is not None
        changes.append(
            FunctionChange(
                file=file,
                qualified_name=name,
                status=status,
                base_lines=line_range(before) if before is not None else None,
                candidate_lines=line_range(after) if after is not None else None,
                parameters=parameter_names(reference),
            )
        )
    return changes


def iter_functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, FunctionNode]]:
    """Every function and method with its qualified name (``Class.method``, ``outer.inner``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from iter_functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from iter_functions(node, f"{prefix}{node.name}.")
        else:
            yield from iter_functions(node, prefix)


def find_function(tree: ast.Module, qualified_name: str) -> FunctionNode | None:
    return dict(iter_functions(tree)).get(qualified_name)


def normalised_dump(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=True, include_attributes=False)


def line_range(node: FunctionNode) -> tuple[int, int]:
    first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def parameter_names(node: FunctionNode) -> tuple[str, ...]:
    arguments = node.args
    names = [arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    if arguments.vararg is not None:
        names.append(arguments.vararg.arg)
    if arguments.kwarg is not None:
        names.append(arguments.kwarg.arg)
    return tuple(names)


def _source_files(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part in IGNORED_DIRECTORY_NAMES for part in relative.parts):
            continue
        if path.is_file() and path.suffix not in IGNORED_SUFFIXES:
            files[relative.as_posix()] = path.read_bytes()
    return files


class Unshown(BaseModel):
    """A file version whose bytes are no text: it has no lines to diff and no functions."""

    reason: str


def _text(content: bytes | None, is_python: bool) -> str | Unshown:
    """The text of one version: a Python file's as Python reads it (PEP 263: its coding declaration, else UTF-8),
    any other file's as UTF-8; never with replacement characters, which would compare mangled text."""
    if content is None:
        return ""
    if is_python:
        try:
            return decode_source(content).text
        except UnreadableSource as unreadable:
            return Unshown(reason=unreadable.reason)
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as error:
        return Unshown(reason=f"not UTF-8: byte 0x{content[error.start]:02x} at offset {error.start} ({error.reason})")


def _parse(text: str | Unshown) -> ast.Module | None:
    if isinstance(text, Unshown):
        return None
    try:
        return parse_module(text)
    except SyntaxError:
        return None


def _module_level_dump(tree: ast.Module | None) -> str | None:
    if tree is None:
        return None
    statements = [node for node in tree.body if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    stripped = [_without_functions(node) for node in statements]
    return "\n".join(normalised_dump(node) for node in stripped)


def _without_functions(node: ast.stmt) -> ast.stmt:
    if isinstance(node, ast.ClassDef):
        kept = [child for child in node.body if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)]
        without = copy.copy(node)  # shallow: the same bases, keywords, decorators (and type_params on 3.12+)
        without.body = kept
        return without
    return node


def _unshown_diff_lines(
    relpath: str, status: ChangeStatus, before: str | Unshown, after: str | Unshown
) -> Iterator[str]:
    """The headers and, for each version that is no text, why its lines are not shown (no line is counted)."""
    from_file, to_file = _diff_names(relpath, status)
    yield f"--- {from_file}\n"
    yield f"+++ {to_file}\n"
    for side, text in (("before", before), ("after", after)):
        if isinstance(text, Unshown):
            yield f"\\ {side}: not shown, {text.reason}\n"


def _diff_names(relpath: str, status: ChangeStatus) -> tuple[str, str]:
    return (
        "/dev/null" if status == "added" else f"a/{relpath}",
        "/dev/null" if status == "removed" else f"b/{relpath}",
    )


def _unified_diff_lines(relpath: str, before: str, after: str, status: ChangeStatus) -> Iterator[str]:
    from_file, to_file = _diff_names(relpath, status)
    for line in difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), from_file, to_file
    ):
        yield line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
