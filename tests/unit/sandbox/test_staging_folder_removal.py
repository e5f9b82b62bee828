"""A finished command's staging folder goes on a thread of its own; a folder that cannot go does not stop it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from libs.sandbox.folder_removal import remove_later
from tests.support.waiting import wait_until


class _Unremovable(tempfile.TemporaryDirectory[str]):
    def cleanup(self) -> None:
        raise PermissionError("not this one")


def test_a_queued_folder_is_removed_with_everything_in_it(tmp_path: Path) -> None:
    folder = tempfile.TemporaryDirectory(dir=tmp_path)
    (Path(folder.name) / "home" / ".cache").mkdir(parents=True)
    (Path(folder.name) / "home" / ".cache" / "x").write_text("left by the command")
    remove_later(folder)
    assert wait_until(lambda: not Path(folder.name).exists(), 10)


def test_a_folder_that_cannot_be_removed_does_not_stop_the_ones_after_it(tmp_path: Path) -> None:
    stuck = _Unremovable(dir=tmp_path)
    after = tempfile.TemporaryDirectory(dir=tmp_path)
    remove_later(stuck)
    remove_later(after)
    assert wait_until(lambda: not Path(after.name).exists(), 10)
    assert Path(stuck.name).exists()
    tempfile.TemporaryDirectory.cleanup(stuck)
