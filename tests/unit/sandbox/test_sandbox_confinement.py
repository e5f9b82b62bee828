"""The bubblewrap argument list: an allow-listed view, deeper mounts on top, protected paths covered."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from libs.sandbox.confinement import (
    DROP_PROGRAM,
    EMPTY_FOLDERS,
    SYSTEM_FOLDERS,
    Identity,
    Mount,
    View,
    bwrap_argv,
    bwrap_mounts,
    covers_needed,
    shown_folders,
)
from libs.sandbox.protected_paths import inside


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


def _reference_covers(view: View) -> list[Path]:
    """The definition, one path against each folder: exists, and is a system folder or lies strictly inside one
    shown."""
    shown = shown_folders(view)
    system = [Path(name) for name in SYSTEM_FOLDERS]
    return sorted(
        path
        for path in set(view.protected)
        if os.path.exists(path) and (path in system or any(inside(path, f) and path != f for f in shown))
    )


def _reference_parents(view: View, covers: list[Path]) -> set[str]:
    """The definition: each folder on the way to a mount that no bound folder provides, or that lies in a cover."""
    bound = [Path(name) for name in SYSTEM_FOLDERS] + [m.target for m in (view.cwd, *view.readable)]
    targets = [m.target for m in (view.cwd, *view.readable, *view.writable)] + covers
    targets += [Path(p) for p in EMPTY_FOLDERS]
    return {
        str(parent)
        for target in targets
        for parent in target.parents
        if parent != Path("/")
        and parent not in covers
        and (any(inside(parent, c) for c in covers) or not any(inside(parent, f) for f in bound))
    }


def test_covers_and_parents_found_by_ancestor_lookups_are_those_of_the_definition(tmp_path: Path) -> None:
    """Names that share prefixes (``a``, ``ab``, ``a-b``, ``a.b``), covers inside shown folders and shown folders
    inside covers, links to nothing: 300 random views over one tree, each against the definition."""
    names = ["a", "ab", "a-b", "a.b", "b"]
    paths, level = [tmp_path], [tmp_path]
    for _ in range(3):
        level = [parent / name for parent in level for name in names]
        paths += level
    for path in paths[1:]:
        if random.Random(str(path)).random() < 0.7:
            path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "b" / "dangling").parent.mkdir(exist_ok=True)
    (tmp_path / "b" / "dangling").symlink_to(tmp_path / "nowhere")
    paths += [tmp_path / "b" / "dangling", Path("/etc/shadow"), Path("/usr"), Path("/usr/lib")]
    rng = random.Random(18)
    for _ in range(300):
        cwd, *rest = rng.sample(paths[1:], 8)
        view = View(
            cwd=Mount(cwd, cwd),
            readable=tuple(Mount(p, p) for p in rest[:3]),
            writable=tuple(Mount(p, p) for p in rest[3:5]),
            protected=tuple(rng.sample(paths, 6)),
        )
        covers = covers_needed(view)
        assert covers == _reference_covers(view)
        made = set(_pairs(bwrap_mounts(view), "--dir"))
        assert made == _reference_parents(view, covers) | set(EMPTY_FOLDERS)


def test_the_sandbox_s_own_dev_and_proc_come_before_every_bind_so_a_folder_shown_under_dev_lands_on_top() -> None:
    """A temporary folder under ``/dev/shm`` (``TMPDIR=/dev/shm``, a common way to put scratch in memory) is bound
    after ``--dev /dev`` mounts the sandbox's own ``/dev``: bound before it, it was hidden and every command failed."""
    scratch = Path("/dev/shm/modelguard-run-x")
    cwd = scratch / "tree"
    view = View(cwd=Mount(cwd, cwd), writable=(Mount(scratch / "home", scratch / "home"),))
    mounts = bwrap_mounts(view)
    under_shm = [index for index, value in enumerate(mounts) if value.startswith("/dev/shm")]
    assert len(under_shm) >= 3  # its parents made, the tree and the home bound
    assert mounts.index("--dev") < min(under_shm) and mounts.index("--proc") < min(under_shm)
    assert mounts[mounts.index("--dev") + 1] == "/dev" and mounts[mounts.index("--proc") + 1] == "/proc"
