"""Probing the isolation this machine allows: never claimed without a sandbox that actually started."""

from __future__ import annotations

import shutil
from pathlib import Path

from libs.sandbox.confinement import Confinement, bwrap_mounts, wrap
from libs.sandbox.isolation import Isolation, probe_isolation


def test_without_the_programs_isolation_is_reported_unavailable_with_the_reason() -> None:
    isolation = probe_isolation("auto", bwrap="modelguard-no-such-bwrap", unshare="modelguard-no-such-unshare")
    assert isolation.mechanism == "none" and not isolation.network and not isolation.filesystem
    assert isolation.network_status() == "unavailable (bwrap not installed; unshare not installed)"
    assert isolation.filesystem_status().startswith("not enforced")


def test_a_program_that_fails_its_probe_is_not_used() -> None:
    false = shutil.which("false")
    assert false is not None
    isolation = probe_isolation("bwrap", bwrap=false, unshare=None)
    assert isolation.mechanism == "none"
    assert isolation.reason.startswith(f"{false}: exit 1")


def test_policy_none_disables_isolation_and_says_so() -> None:
    isolation = probe_isolation("none")
    assert isolation.network_status() == "unavailable (isolation disabled by the sandbox policy)"


def test_auto_uses_the_strongest_mechanism_that_started_here() -> None:
    isolation = probe_isolation("auto")
    if shutil.which("bwrap") and isolation.mechanism != "bwrap":
        assert isolation.reason, "a bwrap that did not start must say why"
    assert isolation.network == (isolation.mechanism in ("bwrap", "unshare"))


def test_deeper_mounts_land_on_top_and_hidden_folders_end_read_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    copy = home / "work" / "copy"
    scratch = tmp_path / "scratch"
    for folder in (copy, scratch):
        folder.mkdir(parents=True)
    mounts = bwrap_mounts(Confinement(cwd=copy, scratch=scratch, hidden=(home,)))
    assert mounts[:3] == ["--ro-bind", "/", "/"]
    assert mounts.index(str(home)) < mounts.index(str(copy))
    assert mounts[mounts.index(str(copy)) - 1] == "--ro-bind"
    assert mounts[mounts.index(str(scratch)) - 1] == "--bind"
    remounts = mounts[mounts.index("--remount-ro") :]
    assert remounts[0::2] == ["--remount-ro"] * (len(remounts) // 2), "read-only again after every bind"
    assert str(home) in remounts[1::2] and "/tmp" in remounts[1::2]


def test_without_isolation_the_command_is_unchanged(tmp_path: Path) -> None:
    none = Isolation("none", None, "test")
    assert wrap(none, Confinement(cwd=tmp_path, scratch=tmp_path), ["/bin/true"]) == ["/bin/true"]
