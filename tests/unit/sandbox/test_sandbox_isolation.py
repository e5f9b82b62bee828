"""Probing the isolation this machine allows: never claimed without a sandbox that actually started."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from libs.sandbox.isolation import Isolation, probe_isolation


def test_without_bubblewrap_isolation_is_none_with_the_reason() -> None:
    isolation = probe_isolation("auto", bwrap="modelguard-no-such-bwrap")
    assert isolation.mechanism == "none" and not isolation.network and not isolation.filesystem
    assert isolation.network_status() == "unavailable (bwrap not installed)"
    assert isolation.filesystem_status().startswith("not enforced")


def test_a_program_that_fails_its_probe_is_not_used() -> None:
    false = shutil.which("false")
    assert false is not None
    isolation = probe_isolation("bwrap", bwrap=false)
    assert isolation.mechanism == "none"
    assert f"{false}: exit 1" in isolation.reason


def test_policy_none_disables_isolation_and_says_so() -> None:
    isolation = probe_isolation("none")
    assert isolation.network_status() == "unavailable (isolation disabled by the sandbox policy)"


def test_the_refusal_is_one_line_with_the_reason_and_how_to_install_bubblewrap() -> None:
    refusal = Isolation("none", None, "bwrap not installed").refusal()
    assert "\n" not in refusal
    assert "(bwrap not installed)" in refusal and "apt-get install bubblewrap" in refusal
    assert "sandbox.allow_unconfined: true" in refusal


def test_bubblewrap_when_it_started_here_and_who_the_command_runs_as() -> None:
    isolation = probe_isolation("auto")
    if shutil.which("bwrap") and isolation.mechanism != "bwrap":
        assert isolation.reason, "a bwrap that did not start must say why"
    if isolation.mechanism != "bwrap":
        return
    identity = isolation.identity(65534, 65534)
    if os.getuid() == 0 and isolation.drop_from_root:
        assert (identity.uid, identity.gid, identity.drop_from_root) == (65534, 65534, True)
    else:
        assert identity.uid == os.getuid() and not identity.drop_from_root


def test_a_probe_runs_once_per_process_whichever_way_its_values_are_named(tmp_path: Path) -> None:
    """The validator and the sandbox ask for the same identity in different call forms: one probe, not two."""
    runs = tmp_path / "runs"
    counting = tmp_path / "counting-bwrap"
    counting.write_text(f"#!/bin/sh\necho run >> {runs}\nexit 1\n")
    counting.chmod(0o755)

    first = probe_isolation("bwrap", str(counting), 65534, 65534)
    again = probe_isolation("bwrap", bwrap=str(counting), uid=65534, gid=65534)
    named = probe_isolation(mode="bwrap", bwrap=str(counting))

    assert first is again is named and first.mechanism == "none"
    assert len(runs.read_text().splitlines()) == (2 if os.getuid() == 0 else 1)  # as root, two identities tried
