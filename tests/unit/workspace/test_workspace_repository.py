from __future__ import annotations

import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from libs.bundle.load import load_bundle
from libs.workspace.git import run_git
from libs.workspace.repository import RepositoryMismatch, build_repository, git_date

BASE_MODULE = "def ratio(a: float, b: float) -> float:\n    if b == 0:\n        return 0.0\n    return a / b\n"
CANDIDATE_MODULE = "def ratio(a: float, b: float) -> float:\n    return a / b\n"


def make_scenario(root: Path, *, candidate_message: str = "Simplify ratio") -> Path:
    """A bundle whose two revisions differ in one module (plus a cache folder that must be left out)."""
    for revision, module in (("base", BASE_MODULE), ("candidate", CANDIDATE_MODULE)):
        tree = root / "workspace" / revision
        (tree / "pkg" / "__pycache__").mkdir(parents=True)
        (tree / "pkg" / "calc.py").write_text(module)
        (tree / "pkg" / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"\0")
    for window in ("approval", "incident"):
        (root / "data" / window).mkdir(parents=True)
        for name in ("train.csv", "eval.csv"):
            (root / "data" / window / name).write_text("x,y\n1,0\n")
    (root / "bundle.yaml").write_text(
        textwrap.dedent(
            f"""\
            format: modelguard-bundle/1
            name: tiny
            model: {{urn: "urn:li:mlModel:(urn:li:dataPlatform:mlflow,tiny,PROD)", repository: example/tiny}}
            gate: {{metric: f1, direction: higher_is_better, tolerance: 0.01}}
            workspace: {{evaluate: [python, evaluate.py], label: y, feature_modules: [pkg/calc.py]}}
            commits:
              base:
                message: Add ratio
                author: {{name: Ada, email: ada@example.com}}
                date: "2025-01-02T03:04:05+00:00"
              candidate:
                message: {candidate_message}
                author: {{name: Bo, email: bo@example.com}}
                date: "2025-01-03T10:00:00-05:00"
            """
        )
    )
    return root


@pytest.fixture
def scenario_dir(tmp_path: Path) -> Path:
    return make_scenario(tmp_path / "scenario")


def test_same_scenario_gives_same_shas_in_different_places(scenario_dir: Path, tmp_path: Path) -> None:
    first = build_repository(load_bundle(scenario_dir), tmp_path / "one")
    second = build_repository(load_bundle(scenario_dir), tmp_path / "elsewhere" / "two")
    assert list(first.commits) == ["base", "candidate"]
    assert first.commits == second.commits
    assert first.head == first.commits["candidate"]


def test_commits_carry_the_scenario_authors_dates_and_messages(scenario_dir: Path, tmp_path: Path) -> None:
    built = build_repository(load_bundle(scenario_dir), tmp_path / "repo")
    log = run_git(["log", "--format=%H|%an|%ae|%aI|%cn|%cI|%s", "main"], built.path).decode().splitlines()
    assert log == [
        f"{built.commits['candidate']}|Bo|bo@example.com|2025-01-03T10:00:00-05:00|Bo|2025-01-03T10:00:00-05:00|"
        "Simplify ratio",
        f"{built.commits['base']}|Ada|ada@example.com|2025-01-02T03:04:05+00:00|Ada|2025-01-02T03:04:05+00:00|"
        "Add ratio",
    ]


def test_the_candidate_tree_is_committed_and_caches_are_left_out(scenario_dir: Path, tmp_path: Path) -> None:
    built = build_repository(load_bundle(scenario_dir), tmp_path / "repo")
    files = run_git(["ls-tree", "-r", "--name-only", built.commits["base"]], built.path).decode().split()
    assert files == ["pkg/calc.py"]
    candidate = run_git(["show", f"{built.commits['candidate']}:pkg/calc.py"], built.path).decode()
    assert "if b == 0" not in candidate
    modes = run_git(["ls-tree", "-r", built.commits["base"]], built.path).decode()
    assert modes.startswith("100644 blob")


def test_building_again_into_the_same_place_is_a_no_op(scenario_dir: Path, tmp_path: Path) -> None:
    first = build_repository(load_bundle(scenario_dir), tmp_path / "repo")
    marker = first.path / "untracked.txt"
    marker.write_text("left alone")
    again = build_repository(load_bundle(scenario_dir), tmp_path / "repo")
    assert again == first
    assert marker.read_text() == "left alone"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["repo", "scenario"], "no staging left"


def test_a_different_history_in_the_destination_is_refused(tmp_path: Path) -> None:
    build_repository(load_bundle(make_scenario(tmp_path / "a")), tmp_path / "repo")
    other = make_scenario(tmp_path / "b", candidate_message="Another message")
    with pytest.raises(RepositoryMismatch):
        build_repository(load_bundle(other), tmp_path / "repo")


def test_a_non_repository_destination_is_refused(scenario_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "occupied").mkdir()
    (tmp_path / "occupied" / "file.txt").write_text("x")
    with pytest.raises(RepositoryMismatch):
        build_repository(load_bundle(scenario_dir), tmp_path / "occupied")


def test_git_date_keeps_the_utc_offset() -> None:
    assert git_date(datetime.fromisoformat("2025-03-10T14:05:00+01:00")) == "1741611900 +0100"
    assert git_date(datetime.fromisoformat("2025-01-03T10:00:00-05:30")) == "1735918200 -0530"
