"""Finding where each cgroup controller lives (v1 or v2, seen from a container or not), and a command's
cgroup set up, read and removed (on a file tree laid out like the kernel's)."""

from __future__ import annotations

from pathlib import Path

from libs.sandbox.control_groups import PREFIX, CommandCgroup, Hierarchy, create_command_cgroup, find_hierarchies

V1_MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
V1_CGROUP = "8:pids:/\n4:memory:/jobs/42\n2:cpuacct:/\n0::/\n"


def test_v1_controllers_are_found_with_modelguards_own_cgroup_in_each() -> None:
    found, missing = find_hierarchies(V1_MOUNTINFO, V1_CGROUP)
    assert found["pids"] == Hierarchy(1, Path("/sys/fs/cgroup/pids"), "/")
    assert found["memory"].own_folder() == Path("/sys/fs/cgroup/memory/jobs/42")
    assert found["cpu"].mount == Path("/sys/fs/cgroup/cpuacct")
    assert missing == {}


def test_a_containers_v2_mount_rooted_at_its_own_cgroup(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    mountinfo = f"50 40 0:40 /kubepods/pod1 {tmp_path} rw - cgroup2 cgroup2 rw\n"
    found, _ = find_hierarchies(mountinfo, "0::/kubepods/pod1\n")
    assert found["pids"] == Hierarchy(2, tmp_path, "/")


def test_v2_without_the_controller_enabled_says_so(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("hugetlb\n")
    found, missing = find_hierarchies(f"50 40 0:40 / {tmp_path} rw - cgroup2 cgroup2 rw\n", "0::/\n")
    assert set(found) == {"cpu"}, "cpu.stat exists in every v2 cgroup"
    assert missing["pids"] == "no cgroup hierarchy with the pids controller"


def _fake_v1(tmp_path: Path) -> dict[str, Hierarchy]:
    """v1 hierarchies as plain folders: a child's files appear as the test writes them."""
    hierarchies = {}
    for controller in ("pids", "memory", "cpu"):
        (tmp_path / controller).mkdir()
        hierarchies[controller] = Hierarchy(1, tmp_path / controller, "/")
    return hierarchies  # type: ignore[return-value]


def test_a_command_cgroup_gets_its_limits_and_is_removed(tmp_path: Path) -> None:
    hierarchies = _fake_v1(tmp_path)
    cgroup = create_command_cgroup(256, 1024, locate=lambda: (hierarchies, {}))  # type: ignore[arg-type,return-value]
    pids = cgroup.folders["pids"]
    assert pids.parent == tmp_path / "pids" and pids.name.startswith(PREFIX)
    assert (pids / "pids.max").read_text() == "256"
    assert (cgroup.folders["memory"] / "memory.limit_in_bytes").read_text() == "1024"
    assert cgroup.describe("pids") == "cgroup v1 pids"
    (pids / "pids.events").write_text("max 3\n")
    (cgroup.folders["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    (cgroup.folders["cpu"] / "cpuacct.usage").write_text("2500000000\n")
    usage = cgroup.usage()
    assert (usage.forks_refused, usage.oom_kills, usage.cpu_s) == (3, 1, 2.5)
    for folder in cgroup.unique_folders():
        for entry in folder.iterdir():
            entry.unlink()  # the kernel's files vanish with the folder
    cgroup.remove()
    assert not any(folder.exists() for folder in cgroup.unique_folders())


def test_a_hierarchy_that_cannot_be_written_is_left_out_with_the_reason(tmp_path: Path) -> None:
    missing_parent = {"pids": Hierarchy(1, tmp_path / "absent", "/")}
    cgroup = create_command_cgroup(256, 1024, locate=lambda: (missing_parent, {}))  # type: ignore[arg-type,return-value]
    assert not cgroup.enforces("pids")
    assert cgroup.describe("pids").startswith(f"cannot create a cgroup in {tmp_path / 'absent'}")


def test_stale_cgroups_of_a_dead_modelguard_process_are_removed(tmp_path: Path) -> None:
    hierarchies = _fake_v1(tmp_path)
    stale = tmp_path / "pids" / f"{PREFIX}999999999-abc"
    stale.mkdir()
    cgroup = create_command_cgroup(8, 8, locate=lambda: (hierarchies, {}))  # type: ignore[arg-type,return-value]
    assert not stale.exists()
    assert isinstance(cgroup, CommandCgroup)
