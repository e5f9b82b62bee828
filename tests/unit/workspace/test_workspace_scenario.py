from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from libs.workspace.scenario import ScenarioError, load_policy, load_scenario

CHURN = Path(__file__).resolve().parents[3] / "fixtures" / "scenarios" / "churn-monthly-spend"


def test_loads_the_churn_scenario() -> None:
    scenario = load_scenario(CHURN)
    assert scenario.name == "churn-monthly-spend"
    assert scenario.model_urn == "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)"
    assert [commit.name for commit in scenario.commits] == ["base", "candidate"]
    base, candidate = scenario.commits
    assert base.tree == CHURN / "repo" / "base" and base.patch is None
    assert candidate.patch == CHURN / "repo" / "02-candidate.patch" and candidate.tree is None
    assert base.date == datetime(2025, 3, 3, 9, 30, tzinfo=UTC)
    assert candidate.date.utcoffset() == timedelta(hours=1)
    assert scenario.commit("candidate") is candidate
    assert scenario.data.generator == CHURN / "data" / "generate_customers.py"
    assert scenario.data.file_name == "customers.csv"
    assert scenario.datahub_metadata == CHURN / "datahub" / "metadata.json"


def test_loads_the_churn_policy() -> None:
    policy = load_policy(load_scenario(CHURN).policy_path)
    assert policy["gate"] == {"metric": "f1", "direction": "higher_is_better", "tolerance": 0.02}
    assert policy["workspace"]["evaluate"] == ["python", "evaluate.py", "--data", "{data}"]
    assert "policy.yaml" in policy["repair"]["protected_paths"]
    assert policy["repair"]["strategies"] == ["guarded_division"]


def write_scenario(root: Path, **changes: object) -> Path:
    (root / "repo" / "base").mkdir(parents=True)
    (root / "repo" / "02.patch").write_text("")
    (root / "gen.py").write_text("")
    (root / "meta.json").write_text("[]")
    (root / "policy.yaml").write_text("gate: {}\nworkspace: {}\n")
    author = {"name": "A", "email": "a@example.com"}
    document: dict[str, object] = {
        "name": "s",
        "model_urn": "urn:li:mlModel:(urn:li:dataPlatform:mlflow,m,PROD)",
        "repository": "o/r",
        "commits": [
            {"name": "base", "tree": "repo/base", "message": "m", "author": author, "date": "2025-01-01T00:00:00Z"},
            {
                "name": "next",
                "patch": "repo/02.patch",
                "message": "m",
                "author": author,
                "date": "2025-01-02T00:00:00Z",
            },
        ],
        "data": {"generator": "gen.py", "rows": 10, "seed": 1, "file": "c.csv"},
        "datahub": "meta.json",
        "policy": "policy.yaml",
    }
    document.update(changes)
    (root / "scenario.yaml").write_text(yaml.safe_dump(document))
    return root


def test_a_minimal_scenario_loads(tmp_path: Path) -> None:
    scenario = load_scenario(write_scenario(tmp_path))
    assert scenario.commits[0].date.tzinfo is not None
    assert scenario.data.dataset_urn is None


@pytest.mark.parametrize(
    "changes",
    [
        {"policy": "../outside.yaml"},
        {"datahub": "missing.json"},
        {"data": {"generator": "gen.py", "rows": 10, "seed": 1, "file": "../c.csv"}},
        {"model_urn": ""},
        {"commits": "not a list"},
    ],
    ids=["path-escapes", "missing-file", "file-with-dirs", "empty-urn", "commits-not-list"],
)
def test_malformed_scenarios_are_refused(tmp_path: Path, changes: dict[str, object]) -> None:
    with pytest.raises(ScenarioError):
        load_scenario(write_scenario(tmp_path, **changes))


def test_commit_rules_are_enforced(tmp_path: Path) -> None:
    author = {"name": "A", "email": "a@example.com"}
    commits = [
        {"name": "base", "patch": "repo/02.patch", "message": "m", "author": author, "date": "2025-01-01T00:00:00Z"}
    ]
    with pytest.raises(ScenarioError, match="first commit"):
        load_scenario(write_scenario(tmp_path / "a", commits=commits))
    commits = [{"name": "base", "tree": "repo/base", "message": "m", "author": author, "date": "2025-01-01T00:00:00"}]
    with pytest.raises(ScenarioError, match="UTC offset"):
        load_scenario(write_scenario(tmp_path / "b", commits=commits))


def test_commit_dates_keep_their_offset(tmp_path: Path) -> None:
    author = {"name": "A", "email": "a@example.com"}
    commits = [
        {"name": "base", "tree": "repo/base", "message": "m", "author": author, "date": "2025-01-01T08:00:00-05:00"}
    ]
    scenario = load_scenario(write_scenario(tmp_path, commits=commits))
    assert scenario.commits[0].date == datetime(2025, 1, 1, 8, tzinfo=timezone(timedelta(hours=-5)))


def test_policy_needs_gate_and_workspace(tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_text("gate: {metric: f1}\n")
    with pytest.raises(ScenarioError, match="workspace"):
        load_policy(tmp_path / "policy.yaml")
    with pytest.raises(ScenarioError):
        load_policy(tmp_path / "absent.yaml")
