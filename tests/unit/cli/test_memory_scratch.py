"""The local stack's scratch folder on a memory filesystem: used only when the filesystem is one, has room, and the
folder is this user's own and private; removed with the stack."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from libs.settings import SCRATCH_DIR_ENV, load_settings
from modelguard.memory_scratch import (
    MEMORY_PARENT,
    filesystem_type,
    memory_scratch,
    remove_memory_scratch,
    scratch_description,
    scratch_folder_of,
)

on_memory = pytest.mark.skipif(
    filesystem_type(MEMORY_PARENT) != "tmpfs", reason=f"{MEMORY_PARENT} is no memory filesystem on this machine"
)


def test_the_deepest_mount_point_names_the_filesystem(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text(
        "/dev/vda / ext4 rw 0 0\n"
        "tmpfs /dev/shm tmpfs rw 0 0\n"
        "tmpfs /srv/my\\040scratch tmpfs rw 0 0\n"
        "/dev/vdb /srv ext4 rw 0 0\n"
        "short line\n"
    )
    assert filesystem_type(Path("/dev/shm/x"), mounts) == "tmpfs"
    assert filesystem_type(Path("/dev/shmx"), mounts) == "ext4"  # a name that merely starts like a mount point
    assert filesystem_type(Path("/srv/my scratch/a"), mounts) == "tmpfs"
    assert filesystem_type(Path("/srv/other"), mounts) == "ext4"
    assert filesystem_type(Path("/"), mounts) == "ext4"
    assert filesystem_type(Path("/x"), tmp_path / "absent") is None


def test_a_disk_folder_is_not_used_as_memory_scratch(tmp_path: Path) -> None:
    if filesystem_type(tmp_path) == "tmpfs":
        pytest.skip("the test's folder is itself on a memory filesystem here")
    assert memory_scratch(tmp_path / "home", parent=tmp_path) is None
    assert list(tmp_path.iterdir()) == []


@on_memory
def test_the_stack_s_folder_is_private_the_same_for_its_home_and_removed_with_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = memory_scratch(home)
    try:
        assert folder == scratch_folder_of(home) and folder.parent == MEMORY_PARENT
        assert folder.stat().st_mode & 0o777 == 0o700 and folder.stat().st_uid == os.getuid()
        assert memory_scratch(home) == folder  # a stack started again from the same home
        assert memory_scratch(tmp_path / "other") != folder
        (folder / "detector" / "workspace-left").mkdir(parents=True)  # left by a service killed mid-step
    finally:
        remove_memory_scratch(home)
        remove_memory_scratch(tmp_path / "other")
    assert not folder.exists()


@on_memory
def test_without_room_the_stack_keeps_its_scratch_under_its_home(tmp_path: Path) -> None:
    assert memory_scratch(tmp_path / "home", room=1 << 62) is None
    assert not scratch_folder_of(tmp_path / "home").exists()


@on_memory
def test_a_name_taken_by_a_link_or_an_open_folder_is_not_used_nor_removed(tmp_path: Path) -> None:
    """``/dev/shm`` is writable by everyone: whatever already holds the folder's name, it is not trusted."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep").write_text("not the stack's")
    folder = scratch_folder_of(home)
    folder.symlink_to(elsewhere)
    try:
        assert memory_scratch(home) is None
        remove_memory_scratch(home)
        assert (elsewhere / "keep").exists()
    finally:
        folder.unlink()
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    try:
        assert memory_scratch(home) is None  # others could enter it
        remove_memory_scratch(home)
        assert folder.exists()
    finally:
        folder.rmdir()


def test_the_bench_says_where_workspaces_were_laid_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("MODELGUARD_HOME", str(home))
    monkeypatch.setenv(SCRATCH_DIR_ENV, "/srv/scratch")
    assert scratch_description(load_settings()).startswith("/srv/scratch (MODELGUARD_SCRATCH_DIR, ")
    monkeypatch.delenv(SCRATCH_DIR_ENV)
    settings = load_settings()
    assert scratch_description(settings, parent=tmp_path).startswith(f"under the home, {home}/state/")
    folder = scratch_folder_of(settings.home, tmp_path)
    folder.mkdir(mode=0o700)
    assert scratch_description(settings, parent=tmp_path).startswith(f"{folder} (")
