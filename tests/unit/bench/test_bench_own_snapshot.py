"""The bench's copy of a snapshot (one more file naming the incident) is still a snapshot the workspace's reader
takes: ``git archive``'s global header once, first, not copied into a pax header before every member."""

from __future__ import annotations

from pathlib import Path

from libs.artifacts.store import LocalArtifactStore
from libs.workspace.git import run_git
from libs.workspace.snapshot import extract_snapshot, snapshot_commit, tree_digests
from modelguard.bench import _own_snapshot
from tests.unit.workspace.test_workspace_snapshot import GIT_IDENTITY


def test_the_bench_s_copy_of_a_snapshot_extracts_with_its_marker(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ("d" * 120)).mkdir(parents=True)
    (root / ("d" * 120) / "model.py").write_text("x = 1\n")
    (root / "train.py").write_text("y = 2\n")
    run_git(["init", "--quiet", "--initial-branch=main"], root)
    run_git(["add", "--all"], root)
    run_git(["commit", "--quiet", "-m", "first"], root, extra_env=GIT_IDENTITY)
    store = LocalArtifactStore(tmp_path / "artifacts")
    given = store.put(snapshot_commit(root, "HEAD"), "application/x-tar")
    extract_snapshot(store.get(given), tmp_path / "given")
    extract_snapshot(store.get(_own_snapshot(store, given, 7)), tmp_path / "copy")
    copied = tree_digests(tmp_path / "copy")
    assert (tmp_path / "copy" / "BENCH_INCIDENT").read_text() == "bench incident 7\n"
    assert copied.pop("BENCH_INCIDENT") and copied == tree_digests(tmp_path / "given")
