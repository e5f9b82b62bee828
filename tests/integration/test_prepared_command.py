"""A command prepared ahead of its run (``libs.sandbox.run.prepared_command``), as a command waiting for its lane is:
what a prepared command holds goes when it is never run, it runs once, its tree is hashed when it is prepared (so a
change made before it runs still fails it), and the caller hears of its reaping before the checks that follow."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

import libs.sandbox.run as sandbox_run
from libs.policy.sandbox import MIB, SandboxLimits, SandboxPolicy
from libs.sandbox import spare_slots
from libs.sandbox.command_slot import CommandSlot
from libs.sandbox.isolation import probe_isolation
from libs.sandbox.known_digests import LOCAL_TREES, SETTLED_NS
from libs.sandbox.run import prepared_command
from libs.sandbox.spare_slots import close_spares
from tests.support.waiting import wait_until

POLICY = SandboxPolicy(limits=SandboxLimits(cpu_s=10, memory_bytes=512 * MIB, wall_s=30, max_processes=64))
pytestmark = pytest.mark.skipif(probe_isolation("auto").mechanism != "bwrap", reason="bubblewrap unavailable")


@pytest.fixture
def slots(monkeypatch: pytest.MonkeyPatch) -> list[CommandSlot]:
    """The slots the sandbox takes, each made on the spot (no spares)."""
    close_spares()
    monkeypatch.setattr(spare_slots, "SPARES", 0)
    taken: list[CommandSlot] = []
    take = sandbox_run.take_slot

    def recorded(*args: Any) -> CommandSlot:
        taken.append(take(*args))
        return taken[-1]

    monkeypatch.setattr(sandbox_run, "take_slot", recorded)
    return taken


def _workspace(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "model.py").write_text("print('predicted')\n")
    return tree


def test_a_prepared_command_never_run_leaves_no_shell_no_cgroup_and_ran_nothing(
    tmp_path: Path, slots: list[CommandSlot]
) -> None:
    tree, marker = _workspace(tmp_path), tmp_path / "out" / "ran.txt"
    marker.parent.mkdir()
    with prepared_command(["python", "-c", f"open({str(marker)!r}, 'w').write('ran')"], tree, POLICY):
        (slot,) = slots
        assert slot.held.process.poll() is None  # held, waiting for its go
        folders = slot.cgroup.unique_folders()
    assert wait_until(lambda: slot.held.process.poll() is not None, 10), "the held shell outlived the block"
    assert not [folder for folder in folders if folder.exists()]
    assert not marker.exists()


def test_a_prepared_command_runs_once(tmp_path: Path, slots: list[CommandSlot]) -> None:
    tree = _workspace(tmp_path)
    with prepared_command(["python", "model.py"], tree, POLICY) as command:
        result = command.run()
        with pytest.raises(RuntimeError, match="has run"):
            command.run()
    assert (result.returncode, result.stdout, result.failed) == (0, "predicted\n", False), result.stderr


def test_a_change_to_the_tree_after_it_was_prepared_fails_the_command(tmp_path: Path, slots: list[CommandSlot]) -> None:
    tree = _workspace(tmp_path)
    with prepared_command(["python", "model.py"], tree, POLICY) as command:
        (tree / "model.py").write_text("print('changed while it waited')\n")
        result = command.run()
    assert result.failed and "model.py" in str(result.report.workspace_changes), result.report


def test_a_change_keeping_size_and_times_to_a_tree_read_before_fails_the_command(
    tmp_path: Path, slots: list[CommandSlot]
) -> None:
    """The tree's digests are known from a run before (its files settled, so the next hash only looks at their
    status): a change of the same length, its modification time set back, between the preparation and the run, is
    still found, by the change time the kernel set."""
    tree = _workspace(tmp_path)
    model = tree / "model.py"
    assert wait_until(lambda: time.time_ns() - model.stat().st_ctime_ns > 2 * SETTLED_NS, timeout_s=10)
    with prepared_command(["python", "model.py"], tree, POLICY) as command:
        assert not command.run().failed
    read_before = LOCAL_TREES.read
    with prepared_command(["python", "model.py"], tree, POLICY) as command:
        assert LOCAL_TREES.read == read_before, "prepared without reading the settled tree again"
        was = model.stat()
        model.write_text("print('forged!!!')\n")  # as long as what it replaces
        os.utime(model, ns=(was.st_atime_ns, was.st_mtime_ns))
        assert (model.stat().st_size, model.stat().st_mtime_ns) == (was.st_size, was.st_mtime_ns)
        result = command.run()
    assert result.failed and "model.py" in str(result.report.workspace_changes), result.report


def test_the_caller_hears_of_the_reaping_before_the_tree_is_hashed_again(
    tmp_path: Path, slots: list[CommandSlot], monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _workspace(tmp_path)
    order: list[tuple[str, float]] = []
    hash_tree = sandbox_run.hash_tree

    def hashing(path: Path, *known: Any) -> Any:
        order.append(("hashed", time.time()))
        return hash_tree(path, *known)

    monkeypatch.setattr(sandbox_run, "hash_tree", hashing)
    with prepared_command(["python", "model.py"], tree, POLICY) as command:
        result = command.run(lambda: order.append(("reaped", time.time())))
    assert [what for what, _ in order] == ["hashed", "reaped", "hashed"]
    assert result.ran is not None and result.ran[1] <= order[1][1]
