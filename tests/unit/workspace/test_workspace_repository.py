from __future__ import annotations

import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from libs.workspace.git import run_git
from libs.workspace.repository import RepositoryMismatch, build_repository, git_date

BASE_MODULE = "def ratio(a: float, b: float) -> float:\n    if b == 0:\n        return 0.0\n    return a / b\n"
PATCH = textwrap.dedent(
    """\
    diff --git a/pkg/calc.py b/pkg/calc.py
    --- a/pkg/calc.py
    +++ b/pkg/calc.py
    @@ -1,4 +1,2 @@
     def ratio(a: float, b: float) -> float:
    -    if b == 0:
    -        return 0.0
         return a / b
    """
)


def make_scenario(root: Path, *, candidate_message: str = "Simplify ratio") -> Path:
    (root / "repo" / "base" / "pkg").mkdir(parents=True)
    (root / "repo" / "base" / "pkg" / "calc.py").write_text(BASE_MODULE)
    (root / "repo" / "base" / "pkg" / "__pycache__").mkdir()
    (root / "repo" / "base" / "pkg" / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"\0")
    (root / "repo" / "02-candidate.patch").write_text(PATCH)
    (root / "data").mkdir()
    (root / "data" / "gen.py").write_text("")
    (root / "metadata.json").write_text("[]")
    (root / "policy.yaml").write_text("gate: {metric: f1}\nworkspace: {}\n")
    (root / "scenario.yaml").write_text(
        textwrap.dedent(
            f"""\
            name: tiny
            model_urn: "urn:li:mlModel:(urn:li:dataPlatform:mlflow,tiny,PROD)"
            repository: example/tiny
            commits:
              - name: base
                tree: repo/base
                message: Add ratio
                author: {{name: Ada, email: ada@example.com}}
                date: "2025-01-02T03:04:05+00:00"
              - name: candidate
                patch: repo/02-candidate.patch
                message: {candidate_message}
                author: {{name: Bo, email: bo@example.com}}
                date: "2025-01-03T10:00:00-05:00"
            data: {{generator: data/gen.py, rows: 10, seed: 1, file: customers.csv}}
            datahub: metadata.json
            policy: policy.yaml
            """
        )
    )
    return root


@pytest.fixture
def scenario_dir(tmp_path: Path) -> Path:
    return make_scenario(tmp_path / "scenario")


def test_same_scenario_gives_same_shas_in_different_places(scenario_dir: Path, tmp_path: Path) -> None:
    first = build_repository(scenario_dir, tmp_path / "one")
    second = build_repository(scenario_dir, tmp_path / "elsewhere" / "two")
    assert list(first.commits) == ["base", "candidate"]
    assert first.commits == second.commits
    assert first.head == first.commits["candidate"]


def test_commits_carry_the_scenario_authors_dates_and_messages(scenario_dir: Path, tmp_path: Path) -> None:
    built = build_repository(scenario_dir, tmp_path / "repo")
    log = run_git(["log", "--format=%H|%an|%ae|%aI|%cn|%cI|%s", "main"], built.path).decode().splitlines()
    assert log == [
        f"{built.commits['candidate']}|Bo|bo@example.com|2025-01-03T10:00:00-05:00|Bo|2025-01-03T10:00:00-05:00|"
        "Simplify ratio",
        f"{built.commits['base']}|Ada|ada@example.com|2025-01-02T03:04:05+00:00|Ada|2025-01-02T03:04:05+00:00|"
        "Add ratio",
    ]


def test_patches_are_applied_and_caches_are_left_out(scenario_dir: Path, tmp_path: Path) -> None:
    built = build_repository(scenario_dir, tmp_path / "repo")
    files = run_git(["ls-tree", "-r", "--name-only", built.commits["base"]], built.path).decode().split()
    assert files == ["pkg/calc.py"]
    candidate = run_git(["show", f"{built.commits['candidate']}:pkg/calc.py"], built.path).decode()
    assert "if b == 0" not in candidate
    modes = run_git(["ls-tree", "-r", built.commits["base"]], built.path).decode()
    assert modes.startswith("100644 blob")


def test_building_again_into_the_same_place_is_a_no_op(scenario_dir: Path, tmp_path: Path) -> None:
    first = build_repository(scenario_dir, tmp_path / "repo")
    marker = first.path / "untracked.txt"
    marker.write_text("left alone")
    again = build_repository(scenario_dir, tmp_path / "repo")
    assert again == first
    assert marker.read_text() == "left alone"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["repo", "scenario"], "no staging left"


def test_a_different_history_in_the_destination_is_refused(tmp_path: Path) -> None:
    build_repository(make_scenario(tmp_path / "a"), tmp_path / "repo")
    other = make_scenario(tmp_path / "b", candidate_message="Another message")
    with pytest.raises(RepositoryMismatch):
        build_repository(other, tmp_path / "repo")


def test_a_non_repository_destination_is_refused(scenario_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "occupied").mkdir()
    (tmp_path / "occupied" / "file.txt").write_text("x")
    with pytest.raises(RepositoryMismatch):
        build_repository(scenario_dir, tmp_path / "occupied")


def test_git_date_keeps_the_utc_offset() -> None:
    assert git_date(datetime.fromisoformat("2025-03-10T14:05:00+01:00")) == "1741611900 +0100"
    assert git_date(datetime.fromisoformat("2025-01-03T10:00:00-05:30")) == "1735918200 -0530"
