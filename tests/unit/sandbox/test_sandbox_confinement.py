"""The bubblewrap argument list: an allow-listed view, deeper mounts on top, protected paths covered."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from libs.sandbox.confinement import DROP_PROGRAM, Identity, Mount, View, bwrap_argv, bwrap_mounts, covers_needed


def _pairs(mounts: list[str], option: str) -> list[str]:
    return [mounts[index + 1] for index, value in enumerate(mounts) if value == option]


def _bind_targets(mounts: list[str], option: str) -> list[str]:
    return [mounts[index + 2] for index, value in enumerate(mounts) if value == option]


def test_only_the_system_the_cwd_the_inputs_and_the_writable_folders_are_bound(tmp_path: Path) -> None:
    cwd, data, out, home = (tmp_path / name for name in ("rev", "data.csv", "out", "home"))
    view = View(cwd=Mount(cwd, cwd), readable=(Mount(data, data),), writable=(Mount(home, home), Mount(out, out)))
    mounts = bwrap_mounts(view)
    read_only = _bind_targets(mounts, "--ro-bind")
    assert "/" not in read_only, "never the whole file system"
    assert {str(cwd), str(data), "/usr", "/etc"} <= set(read_only)
    assert set(_bind_targets(mounts, "--bind")) == {str(home), str(out)}
    assert str(tmp_path) not in read_only, "the parent of the working directory is not shown"
    assert "--remount-ro" in mounts and mounts[mounts.index("--remount-ro") + 1] == "/"


def test_parents_of_mounts_are_created_walkable_before_the_mounts(tmp_path: Path) -> None:
    cwd = tmp_path / "a" / "b" / "rev"
    mounts = bwrap_mounts(View(cwd=Mount(cwd, cwd)))
    made = _pairs(mounts, "--dir")
    assert str(tmp_path / "a" / "b") in made and str(tmp_path / "a") in made
    for folder in made:
        position = mounts.index(folder)
        assert mounts[position - 3 : position - 1] == ["--perms", "0755"]
    assert mounts.index(str(tmp_path / "a" / "b")) < mounts.index(str(cwd))


def test_protected_paths_inside_what_is_shown_are_covered_and_deeper_inputs_land_on_top(tmp_path: Path) -> None:
    cwd = tmp_path / "rev"
    state = cwd / ".modelguard"
    (state / "keys").mkdir(parents=True)
    key = state / "keys" / "validator.key"
    key.write_text("k")
    data = state / "data.csv"
    data.write_text("d")
    view = View(cwd=Mount(cwd, cwd), readable=(Mount(data, data),), protected=(state, key, tmp_path / "elsewhere"))
    assert covers_needed(view) == [state, key]
    mounts = bwrap_mounts(view)
    assert mounts[mounts.index(str(state)) - 1] == "--tmpfs"
    assert mounts.index(str(state)) < mounts.index(str(data)), "the input is mounted on top of the cover"
    assert ["--remount-ro", str(state)] == mounts[mounts.index(str(state), mounts.index("--remount-ro")) - 1 :][:2]


def test_a_protected_file_under_etc_is_covered_with_dev_null() -> None:
    cwd = Path("/usr")
    mounts = bwrap_mounts(View(cwd=Mount(cwd, cwd), protected=(Path("/etc/passwd"),)))
    position = mounts.index("/etc/passwd")
    assert mounts[position - 2 : position] == ["--ro-bind", "/dev/null"]


def test_as_root_the_command_starts_through_the_drop_to_the_unprivileged_uid(tmp_path: Path) -> None:
    view = View(cwd=Mount(tmp_path, tmp_path))
    argv = bwrap_argv("/usr/bin/bwrap", view, Identity(65534, 65534, drop_from_root=True), ["/bin/python", "x.py"])
    assert "--unshare-user" not in argv and "--unshare-net" in argv
    tail = argv[argv.index("--") + 1 :]
    drop = os.path.realpath(sys.executable)  # shown in every view, a workspace environment's too
    assert tail == [drop, "-I", "-S", "-c", DROP_PROGRAM, "65534", "65534", "/bin/python", "x.py"]
    assert argv[argv.index("--cap-drop") + 1] == "ALL"


def test_as_another_user_bubblewrap_makes_a_user_namespace_without_capabilities(tmp_path: Path) -> None:
    view = View(cwd=Mount(tmp_path, tmp_path))
    argv = bwrap_argv("bwrap", view, Identity(1000, 1000, drop_from_root=False), ["/bin/python"])
    assert {"--unshare-user", "--disable-userns", "--unshare-net", "--unshare-pid"} <= set(argv)
    assert "--cap-add" not in argv
    assert argv[argv.index("--") + 1 :] == ["/bin/python"]


def test_folders_on_the_way_through_a_cover_are_created_walkable(tmp_path: Path) -> None:
    cwd = tmp_path / "rev"
    state = cwd / ".modelguard"
    (state / "state" / "scratch").mkdir(parents=True)
    out = state / "state" / "scratch"
    mounts = bwrap_mounts(View(cwd=Mount(cwd, cwd), writable=(Mount(tmp_path / "staged", out),), protected=(state,)))
    assert str(state / "state") in _pairs(mounts, "--dir"), "inside the cover's tmpfs, not the real folder"
    assert mounts.index(str(state)) < mounts.index(str(state / "state")) < mounts.index(str(out))


def test_a_link_to_nothing_is_not_covered(tmp_path: Path) -> None:
    cwd = tmp_path / "rev"
    cwd.mkdir()
    (cwd / "dangling").symlink_to(tmp_path / "nothing")
    assert covers_needed(View(cwd=Mount(cwd, cwd), protected=(cwd / "dangling",))) == []
