"""Each patched file before and after the patch, as text, when the workspace lets the guard know it.

A file is read only when its path is plain and no component of it is a symbolic link, so reading never
leaves the workspace. Without a workspace only created files are known whole; the others are judged by
their hunks (see :mod:`libs.patch_guard.fragments`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from libs.patch_guard.diff_parse import FileChange
from libs.patch_guard.hunk_apply import HunkMismatch, apply_hunks_marking_added, created_text
from libs.patch_guard.paths import is_python, path_shape_problem, symlink_on_path
from libs.python_source.source_encoding import UnreadableSource, decode_source
from libs.python_source.source_text import python_lines

MAX_FILE_BYTES = 5 * 1024 * 1024


class FileImage(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    change: FileChange
    before: str | None = None
    after: str | None = None
    known: bool = False
    """``before`` and ``after`` are the whole file (``after`` is None for a deletion)."""
    problem: str | None = None
    """Why the patch does not apply to the workspace."""
    added_lines: frozenset[int] = frozenset()
    """The numbers of the lines of ``after`` the patch adds, when ``known``: Python's numbers (a lone ``\\r`` ends a
    line), the syntax tree's."""
    approved: str | None = None
    """The same file in the approved (base) revision, when the guard was given it: what it used was reviewed."""


def file_images(changes: list[FileChange], workspace: Path | None, approved: Path | None = None) -> list[FileImage]:
    """``approved``: the approved revision's tree, whose version of each file counts as already reviewed."""
    images = [_image(change, workspace) for change in changes if not change.binary]
    if approved is None:
        return images
    with_approved = []
    for image in images:
        text = read_workspace_text(approved, image.change.old_path or image.path)
        with_approved.append(image.model_copy(update={"approved": None if isinstance(text, Unreadable) else text}))
    return with_approved


def _image(change: FileChange, workspace: Path | None) -> FileImage:
    path = change.path
    if change.operation == "create":
        after = created_text(change.hunks)
        everything = frozenset(range(1, len(python_lines(after)) + 1))
        problem = _absent(workspace, path) if workspace is not None else None
        return FileImage(
            path=path, change=change, before="", after=after, known=True, problem=problem, added_lines=everything
        )
    if workspace is None or change.old_path is None:
        return FileImage(path=path, change=change)
    before = read_workspace_text(workspace, change.old_path)
    if isinstance(before, Unreadable):
        return FileImage(path=path, change=change, problem=before.reason)
    if change.operation == "delete":
        return FileImage(path=path, change=change, before=before, known=True)
    try:
        after, added = apply_hunks_marking_added(before, change.hunks)
    except HunkMismatch as error:
        return FileImage(path=path, change=change, before=before, problem=str(error))
    return FileImage(path=path, change=change, before=before, after=after, known=True, added_lines=added)


class Unreadable(BaseModel):
    reason: str


def read_workspace_text(workspace: Path, path: str) -> str | Unreadable:
    """The UTF-8 text of a plain workspace path with no symbolic link on it, or why it cannot be read.

    A Python file's bytes are read by Python's rule (PEP 263, ``decode_source``), the one every reader shares, and
    refused with its reason when Python would refuse them. One that declares another encoding and holds bytes that
    are not the UTF-8 of its text (a Latin-1 file with accents) is refused too: the patch is UTF-8 text, and checking
    it against a decoded text that is not the file's bytes would judge a file git does not apply it to."""
    if path_shape_problem(path):
        return Unreadable(reason="not read: not a plain path inside the workspace")
    if symlink_on_path(workspace, path):
        return Unreadable(reason="not read: a symbolic link is on the path")
    file = workspace / path
    if not file.is_file():
        return Unreadable(reason="no such file in the workspace")
    if file.stat().st_size > MAX_FILE_BYTES:
        return Unreadable(reason=f"larger than {MAX_FILE_BYTES} bytes")
    try:
        raw = file.read_bytes()
    except OSError as error:
        return Unreadable(reason=f"unreadable: {error.strerror or error}")
    if not is_python(path):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return Unreadable(reason="the workspace file is not UTF-8 text")
    try:
        decoded = decode_source(raw)
    except UnreadableSource as unreadable:
        return Unreadable(reason=unreadable.reason)
    if not decoded.is_utf8 and decoded.text.encode("utf-8") != raw:
        return Unreadable(
            reason=f"declares encoding {decoded.encoding} (PEP 263) and holds text that is not UTF-8: only UTF-8 "
            "is read the same by every tool"
        )
    return decoded.text


def _absent(workspace: Path, path: str) -> str | None:
    if path_shape_problem(path):
        return None
    target = workspace / path
    if target.exists() or target.is_symlink():
        return "the file to create already exists in the workspace"
    return None
