from __future__ import annotations

from pathlib import Path

import pytest

from libs.atomic_file import atomic_write


def test_writes_the_bytes_and_creates_the_folder(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "record.json"
    atomic_write(target, b"first")
    atomic_write(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["record.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "record.json"
    atomic_write(target, b"kept")

    def refuse(src: str, dst: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("libs.atomic_file.os.replace", refuse)
    with pytest.raises(OSError, match="No space"):
        atomic_write(target, b"lost")
    assert target.read_bytes() == b"kept"
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]
