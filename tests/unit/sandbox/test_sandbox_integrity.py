"""Hashing every file of a tree and naming what changed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from libs.sandbox.integrity import TreeChanges, compare_trees, hash_tree


def test_every_file_is_hashed_caches_included(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "m.py").write_bytes(b"x = 1\n")
    (tmp_path / "pkg" / "__pycache__" / "m.pyc").write_bytes(b"\0")
    os.symlink("pkg", tmp_path / "alias")
    digests = hash_tree(tmp_path)
    assert list(digests) == ["alias", "pkg/__pycache__/m.pyc", "pkg/m.py"]
    assert digests["pkg/m.py"] == hashlib.sha256(b"x = 1\n").hexdigest()
    assert digests["alias"] == hashlib.sha256(b"symlink:pkg").hexdigest()


def test_a_link_whose_target_is_not_utf8_is_hashed_by_its_bytes(tmp_path: Path) -> None:
    """A hostile snapshot's link: hashed by the bytes it names, not a crash of the sandbox."""
    os.symlink(b"not-utf8-\xff", os.fsencode(tmp_path / "odd"))
    os.symlink("folder", tmp_path / "to-folder")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "inside.txt").write_text("in")
    digests = hash_tree(tmp_path)
    assert digests["odd"] == hashlib.sha256(b"symlink:not-utf8-\xff").hexdigest()
    assert digests["to-folder"] == hashlib.sha256(b"symlink:folder").hexdigest()  # a link to a folder: not followed
    assert list(digests) == ["folder/inside.txt", "odd", "to-folder"]


def test_created_modified_and_deleted_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a")
    (tmp_path / "b.py").write_text("b")
    before = hash_tree(tmp_path)
    (tmp_path / "a.py").write_text("changed")
    (tmp_path / "b.py").unlink()
    (tmp_path / "model.pkl").write_bytes(b"\x80")
    changes = compare_trees(before, hash_tree(tmp_path))
    assert changes == TreeChanges(created=("model.pkl",), modified=("a.py",), deleted=("b.py",))
    assert not changes.unchanged
    assert changes.summary() == "created model.pkl; modified a.py; deleted b.py"
    assert compare_trees(before, before).unchanged
