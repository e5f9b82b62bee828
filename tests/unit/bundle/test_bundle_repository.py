"""The bundle's repository: two commits with the same SHAs on every build; the candidate's deletions are
deletions; and the data windows travel as one deterministic artifact that evaluates like the files."""

from __future__ import annotations

from pathlib import Path

from libs.bundle.load import load_bundle
from libs.workspace.commands import evaluate
from libs.workspace.data_windows import FILE_NAMES, WINDOW_NAMES, pack_data_windows, unpack_data_windows
from libs.workspace.git import run_git
from libs.workspace.repository import build_repository
from tests.support.tiny_bundle import make_tiny_bundle


def test_the_same_bundle_builds_the_same_commits(tmp_path: Path) -> None:
    bundle = load_bundle(make_tiny_bundle(tmp_path / "b"))
    first = build_repository(bundle, tmp_path / "one")
    second = build_repository(bundle, tmp_path / "two")
    assert first.commits == second.commits
    assert first.commits["base"] != first.commits["candidate"]
    changed = run_git(["diff", "--name-only", first.commits["base"], first.commits["candidate"]], first.path)
    assert changed.decode().split() == ["tiny/features.py"]


def test_a_file_the_candidate_lacks_is_deleted_in_its_commit(tmp_path: Path) -> None:
    root = make_tiny_bundle(tmp_path / "b")
    (root / "workspace" / "base" / "NOTES.md").write_text("old notes\n")
    repo = build_repository(load_bundle(root), tmp_path / "repo")
    listed = run_git(["ls-tree", "-r", "--name-only", repo.commits["candidate"]], repo.path).decode().split()
    assert "NOTES.md" not in listed and "evaluate.py" in listed


def test_data_windows_pack_deterministically_and_evaluate_like_the_files(tmp_path: Path) -> None:
    bundle = load_bundle(make_tiny_bundle(tmp_path / "b"))
    files = {w: {n: bundle.window_file(w, n) for n in FILE_NAMES} for w in WINDOW_NAMES}
    packed = pack_data_windows(files)
    assert packed == pack_data_windows(files)
    windows = unpack_data_windows(packed, tmp_path / "data")
    assert windows["incident"].eval.read_bytes() == bundle.window_file("incident", "eval.csv").read_bytes()
    spec = bundle.spec.workspace.command_spec()
    baseline = evaluate(bundle.tree("base"), windows["approval"], spec).metrics["accuracy"]
    candidate = evaluate(bundle.tree("candidate"), windows["incident"], spec).metrics["accuracy"]
    assert baseline > 0.8 > 0.2 > candidate  # the sign flip inverts every decision
