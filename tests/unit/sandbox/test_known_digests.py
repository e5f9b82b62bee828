"""A file's digest is given again without reading it only while the kernel says the file is unchanged: a change of
the same size with its modification time set back, a file renamed over it, a change made while it was read or just
before, each has it read again; and a tree whose files are all known is hashed without reading one."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

import pytest

import libs.sandbox.known_digests as known_digests
from libs.sandbox.integrity import compare_trees, hash_tree
from libs.sandbox.known_digests import SETTLED_NS, KnownDigests
from tests.support.waiting import wait_until


def _settled(*paths: Path) -> None:
    """Wait until each file's last change is well past the time a digest needs to be kept."""
    assert wait_until(lambda: all(time.time_ns() - p.stat().st_ctime_ns > 2 * SETTLED_NS for p in paths), 10)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_settled_file_is_read_once(tmp_path: Path) -> None:
    model = tmp_path / "model.py"
    model.write_bytes(b"w = 0.5\n")
    _settled(model)
    known = KnownDigests()
    assert known.digest(str(model)) == known.digest(str(model)) == _sha(b"w = 0.5\n")
    assert known.read == 1


def test_a_change_of_the_same_size_with_its_time_set_back_is_read_again(tmp_path: Path) -> None:
    model = tmp_path / "model.py"
    model.write_bytes(b"w = 0.5\n")
    _settled(model)
    known = KnownDigests()
    known.digest(str(model))
    was = model.stat()
    model.write_bytes(b"w = 9.9\n")
    os.utime(model, ns=(was.st_atime_ns, was.st_mtime_ns))  # what a forger can set; the change time it cannot
    assert (model.stat().st_size, model.stat().st_mtime_ns) == (was.st_size, was.st_mtime_ns)
    assert known.digest(str(model)) == _sha(b"w = 9.9\n") and known.read == 2


def test_a_file_renamed_over_it_is_read(tmp_path: Path) -> None:
    model, forged = tmp_path / "model.py", tmp_path / "forged.py"
    model.write_bytes(b"w = 0.5\n")
    forged.write_bytes(b"w = 9.9\n")
    os.utime(forged, ns=(model.stat().st_atime_ns, model.stat().st_mtime_ns))
    _settled(model, forged)
    known = KnownDigests()
    known.digest(str(model))
    forged.rename(model)
    assert known.digest(str(model)) == _sha(b"w = 9.9\n") and known.read == 2


def test_a_file_changed_just_before_it_was_read_is_read_every_time(tmp_path: Path) -> None:
    """Its change time may not move at a change in the same clock tick: it is not kept until it has settled."""
    model = tmp_path / "model.py"
    model.write_bytes(b"w = 0.5\n")
    known = KnownDigests(clock=lambda: model.stat().st_ctime_ns + SETTLED_NS // 2)  # read 50 ms after its change
    for _ in range(3):
        assert known.digest(str(model)) == _sha(b"w = 0.5\n")
    assert known.read == 3


def test_a_file_changed_while_it_was_read_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "model.py"
    model.write_bytes(b"w = 0.5\n")
    _settled(model)
    real = hashlib.file_digest

    def written_meanwhile(handle: Any, name: str) -> Any:
        digest = real(handle, name)
        with open(model, "ab") as more:
            more.write(b"# more\n")
        return digest

    monkeypatch.setattr(known_digests.hashlib, "file_digest", written_meanwhile)
    known = KnownDigests()
    known.digest(str(model))
    monkeypatch.setattr(known_digests.hashlib, "file_digest", real)
    assert known.digest(str(model)) == _sha(b"w = 0.5\n# more\n") and known.read == 2


def test_past_its_limit_the_oldest_half_is_forgotten(tmp_path: Path) -> None:
    files = [tmp_path / f"f{i}" for i in range(6)]
    for i, path in enumerate(files):
        path.write_bytes(bytes([i]))
    _settled(*files)
    known = KnownDigests(limit=4)
    for path in files:
        known.digest(str(path))
    known.read = 0
    for path in files[2:]:
        known.digest(str(path))
    assert known.read == 0  # f2 to f5 kept
    known.digest(str(files[0]))
    assert known.read == 1  # f0 and f1 were forgotten when f4 came


def test_a_known_tree_is_hashed_without_reading_and_a_change_is_named(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    for name in ("a.py", "b.py", "pkg/c.py"):
        (tmp_path / name).write_text(name)
    os.symlink("a.py", tmp_path / "alias")
    _settled(*(tmp_path / n for n in ("a.py", "b.py", "pkg/c.py")))
    known = KnownDigests()
    before = hash_tree(tmp_path, known)
    assert before == hash_tree(tmp_path) and known.read == 3
    assert hash_tree(tmp_path, known) == before and known.read == 3  # not one file read
    (tmp_path / "pkg" / "c.py").write_text("C.py")  # same size
    assert compare_trees(before, hash_tree(tmp_path, known)).modified == ("pkg/c.py",)
    assert known.read == 4
