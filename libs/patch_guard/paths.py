"""What a path in a patch may look like, and what it points at inside the workspace.

A patch path must be a plain relative POSIX path: no absolute path or drive, no ``..``, ``.`` or empty
component, no backslash, no control character. Inside a workspace, no component of the path may be a
symbolic link: a repair that edits ``pkg/link.py`` where ``pkg/link.py -> ../tests/test_model.py`` edits
the test, whatever the path says.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict

_DRIVE = re.compile(r"^[A-Za-z]:")


class SymlinkOnPath(BaseModel):
    """A component of a patch path that is a symbolic link in the workspace."""

    model_config = ConfigDict(frozen=True)

    link: str
    target: str
    escapes: bool
    """The link resolves outside the workspace."""


def path_shape_problem(path: str) -> str | None:
    """Why ``path`` is not a plain relative path inside the workspace, or None."""
    if not path:
        return "empty path"
    if any(ord(char) < 32 or ord(char) == 127 for char in path):
        return "control character in the path"
    if "\\" in path:
        return "backslash in the path"
    if path.startswith("/") or _DRIVE.match(path):
        return "absolute path"
    parts = path.split("/")
    if ".." in parts:
        return "'..' leaves the workspace"
    if "" in parts or "." in parts:
        return "not a normalised path ('//', './' or a trailing '/')"
    return None


def symlink_on_path(workspace: Path, path: str) -> SymlinkOnPath | None:
    """The first component of ``path`` that is a symbolic link in ``workspace``, or None.

    ``path`` must already have passed :func:`path_shape_problem`."""
    root = workspace.resolve()
    current = root
    for part in PurePosixPath(path).parts:
        current = current / part
        if current.is_symlink():
            target = os.readlink(current)
            resolved = current.resolve()
            return SymlinkOnPath(
                link=current.relative_to(root).as_posix(), target=target, escapes=not resolved.is_relative_to(root)
            )
        if not current.exists():
            return None
    return None


def resolves_inside(workspace: Path, path: str) -> bool:
    """``path`` resolved in ``workspace`` (following any symbolic link) is still inside it."""
    root = workspace.resolve()
    return (root / path).resolve().is_relative_to(root)


PYTHON_SUFFIXES = frozenset({".py", ".pyw", ".pyi"})


def is_python(path: str) -> bool:
    """Whether a patch path names a Python file (its suffix)."""
    return PurePosixPath(path).suffix in PYTHON_SUFFIXES
