"""Copying a workspace: sources only; links out and special files refuse the copy."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from libs.sandbox.copy import UnsafeWorkspace, copy_workspace

SKIPPED = (
    ".git/config",
    ".hg/store",
    ".svn/entries",
    ".venv/bin/python",
    "venv/lib/x.py",
    "env/lib/y.py",
    "pkg/__pycache__/m.cpython-311.pyc",
    ".pytest_cache/v/cache",
    ".mypy_cache/3.11/m.json",
    ".ruff_cache/0.1/x",
    "node_modules/left-pad/index.js",
    "pkg/stale.pyc",
)
KEPT = ("evaluate.py", "pkg/__init__.py", "pkg/m.py", "tests/test_m.py", "data/schema.json")


def _write(root: Path, relpaths: tuple[str, ...]) -> None:
    for relpath in relpaths:
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(relpath)


def _files(root: Path) -> list[str]:
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*") if not path.is_dir())


def test_only_sources_are_copied(tmp_path: Path) -> None:
    _write(tmp_path / "src", SKIPPED + KEPT)
    os.symlink("m.py", tmp_path / "src" / "pkg" / "alias.py")
    copy = copy_workspace(tmp_path / "src", tmp_path / "copy")
    assert _files(copy) == sorted([*KEPT, "pkg/alias.py"])
    assert (copy / "pkg" / "alias.py").is_symlink() and os.readlink(copy / "pkg" / "alias.py") == "m.py"


@pytest.mark.parametrize("target", ["/etc/passwd", "../outside.py", "pkg/../../outside.py"])
def test_a_link_out_of_the_workspace_refuses_the_copy(tmp_path: Path, target: str) -> None:
    _write(tmp_path / "src", KEPT)
    (tmp_path / "outside.py").write_text("secret")
    os.symlink(target, tmp_path / "src" / "escape.py")
    with pytest.raises(UnsafeWorkspace, match=r"escape\.py"):
        copy_workspace(tmp_path / "src", tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_a_special_file_refuses_the_copy(tmp_path: Path) -> None:
    _write(tmp_path / "src", KEPT)
    os.mkfifo(tmp_path / "src" / "pipe")
    with pytest.raises(UnsafeWorkspace, match="not a regular file: pipe"):
        copy_workspace(tmp_path / "src", tmp_path / "copy")
