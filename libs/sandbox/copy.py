"""Copy a workspace for a sandboxed run: sources only, never version-control data, virtual environments,
caches or byte-code; a symbolic link that leaves the workspace, or a special file, refuses the copy."""

from __future__ import annotations

import fnmatch
import os
import shutil
import stat
from pathlib import Path

EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "env",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        "node_modules",
    }
)
EXCLUDED_FILES = ("*.pyc", "*.pyo")


class UnsafeWorkspace(ValueError):
    """The workspace holds a link out of itself or a file that is not a regular file, folder or link."""


def excluded(name: str, is_dir: bool) -> bool:
    if is_dir:
        return name in EXCLUDED_DIRS
    return any(fnmatch.fnmatch(name, pattern) for pattern in EXCLUDED_FILES)


def check_link(link: Path, root: Path) -> None:
    target = os.readlink(link)
    if os.path.isabs(target) or not (link.parent / target).resolve().is_relative_to(root):
        raise UnsafeWorkspace(f"link points out of the workspace: {link.relative_to(root)} -> {target}")


def check_tree(source: Path) -> None:
    """Refuse links that leave ``source`` and special files (sockets, devices, pipes), before copying."""
    root = source.resolve()
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [name for name in subdirs if not excluded(name, is_dir=True)]
        for name in [*subdirs, *files]:
            path = Path(directory) / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                check_link(path, root)
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)) and not excluded(name, is_dir=False):
                raise UnsafeWorkspace(f"not a regular file: {path.relative_to(root)}")


def _ignore(directory: str, names: list[str]) -> set[str]:
    return {name for name in names if excluded(name, is_dir=os.path.isdir(os.path.join(directory, name)))}


def copy_workspace(source: Path, destination: Path) -> Path:
    """Copy ``source`` to ``destination`` (which must not exist); links are copied as links."""
    source = Path(source)
    check_tree(source)
    shutil.copytree(source, destination, symlinks=True, ignore=_ignore)
    return Path(destination)
