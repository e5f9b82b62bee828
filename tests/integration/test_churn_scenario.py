"""The churn scenario end to end at the workspace level: build the repository, snapshot each commit,
run the workspace's own commands on generated data and check what the story claims, with every number
computed here."""

from __future__ import annotations

import csv
import difflib
import hashlib
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.ingestion.source.file import read_metadata_file

from libs.workspace.commands import EvaluationResult, TestRun, build_features, evaluate, run_tests
from libs.workspace.data_checks import InvalidValueCount, count_invalid_values, count_source_anomalies
from libs.workspace.git import run_git
from libs.workspace.repository import BuiltRepository, build_repository
from libs.workspace.runner import run_command
from libs.workspace.scenario import Scenario, load_policy, load_scenario
from libs.workspace.scenario_data import generate_scenario_data
from libs.workspace.snapshot import extract_snapshot, snapshot_commit, tree_digests

CHURN = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios" / "churn-monthly-spend"
FEATURES_MODULE = Path("churn_model") / "features.py"
DIVISION = "    return total_spend / account_age_months\n"
GUARD = "    if account_age_months <= 0:\n        return 0.0\n"
VARIANTS = ("base", "candidate", "repaired")


def apply_guard(workspace: Path) -> None:
    """The two-line guarded_division repair, applied textually to the candidate's feature function."""
    path = workspace / FEATURES_MODULE
    source = path.read_text(encoding="utf-8")
    assert source.count(DIVISION) == 1
    path.write_text(source.replace(DIVISION, GUARD + DIVISION), encoding="utf-8")


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_scenario(CHURN)


@pytest.fixture(scope="module")
def policy(scenario: Scenario) -> dict[str, Any]:
    return load_policy(scenario.policy_path)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltRepository:
    return build_repository(CHURN, tmp_path_factory.mktemp("repo") / "churn-model")


@pytest.fixture(scope="module")
def customers(scenario: Scenario, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_scenario_data(scenario, tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def workspaces(built: BuiltRepository, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("workspaces")
    paths = {name: root / name for name in VARIANTS}
    extract_snapshot(snapshot_commit(built.path, built.commits["base"]), paths["base"])
    candidate = snapshot_commit(built.path, built.commits["candidate"])
    extract_snapshot(candidate, paths["candidate"])
    extract_snapshot(candidate, paths["repaired"])
    apply_guard(paths["repaired"])
    return paths


@pytest.fixture(scope="module")
def digests_before(workspaces: dict[str, Path]) -> dict[str, dict[str, str]]:
    return {name: tree_digests(path) for name, path in workspaces.items()}


@pytest.fixture(scope="module")
def evaluations(
    workspaces: dict[str, Path], digests_before: dict[str, dict[str, str]], customers: Path, policy: dict
) -> dict[str, EvaluationResult]:
    return {name: evaluate(path, customers, policy["workspace"]) for name, path in workspaces.items()}


@pytest.fixture(scope="module")
def invalid_values(
    workspaces: dict[str, Path],
    digests_before: dict[str, dict[str, str]],
    customers: Path,
    policy: dict,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, InvalidValueCount]:
    out = tmp_path_factory.mktemp("features")
    return {
        name: count_invalid_values(build_features(path, customers, out / f"{name}.csv", policy["workspace"]))
        for name, path in workspaces.items()
    }


@pytest.fixture(scope="module")
def test_runs(
    workspaces: dict[str, Path], digests_before: dict[str, dict[str, str]], policy: dict
) -> dict[str, TestRun]:
    return {name: run_tests(path, policy["workspace"]) for name, path in workspaces.items()}


def f1(evaluations: dict[str, EvaluationResult], name: str) -> float:
    return evaluations[name].metrics["f1"]


# Repository and snapshots


def test_building_the_repository_twice_gives_the_same_shas(
    built: BuiltRepository, tmp_path_factory: pytest.TempPathFactory
) -> None:
    again = build_repository(CHURN, tmp_path_factory.mktemp("again") / "churn-model")
    assert again.commits == built.commits
    assert list(built.commits) == ["base", "candidate"]
    assert not (CHURN / "repo" / ".git").exists() and not (CHURN / "repo" / "base" / ".git").exists()


def test_candidate_commit_changes_only_the_feature_function(built: BuiltRepository) -> None:
    changed = run_git(["diff", "--name-only", built.commits["base"], built.commits["candidate"]], built.path).decode()
    assert changed.split() == [FEATURES_MODULE.as_posix()]


def test_snapshot_extracts_to_exactly_the_committed_tree(
    built: BuiltRepository, tmp_path_factory: pytest.TempPathFactory
) -> None:
    sha = built.commits["base"]
    first, second = snapshot_commit(built.path, sha), snapshot_commit(built.path, sha)
    assert first == second
    out = tmp_path_factory.mktemp("snapshot") / "base"
    extract_snapshot(first, out)
    committed = run_git(["ls-tree", "-r", "--name-only", sha], built.path).decode().split()
    expected = {path: hashlib.sha256(run_git(["show", f"{sha}:{path}"], built.path)).hexdigest() for path in committed}
    assert tree_digests(out) == expected
    assert tree_digests(out) == tree_digests(CHURN / "repo" / "base")


# Data


def test_generator_is_deterministic_and_realistic(scenario: Scenario) -> None:
    spec = importlib.util.spec_from_file_location("churn_generator", scenario.data.generator)
    assert spec is not None and spec.loader is not None
    generator: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    rows = generator.generate(scenario.data.rows, scenario.data.seed)
    assert rows == generator.generate(scenario.data.rows, scenario.data.seed)
    assert rows != generator.generate(scenario.data.rows, scenario.data.seed + 1)
    brand_new = [row for row in rows if row["account_age_months"] == 0]
    assert 0.03 <= len(brand_new) / len(rows) <= 0.08
    assert all(float(row["total_spend"]) > 0 for row in brand_new), "new accounts paid their first invoice"
    churn_rate = sum(row["churned"] for row in rows) / len(rows)
    assert 0.1 <= churn_rate <= 0.4


def test_generated_file_is_byte_stable(
    scenario: Scenario, customers: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    again = generate_scenario_data(scenario, tmp_path_factory.mktemp("data-again"))
    assert again.read_bytes() == customers.read_bytes()
    with customers.open(newline="") as handle:
        assert sum(1 for _ in csv.DictReader(handle)) == scenario.data.rows


# The regression, measured


def test_candidate_f1_drops_by_more_than_the_gate_tolerance(
    evaluations: dict[str, EvaluationResult], policy: dict
) -> None:
    gate = policy["gate"]
    assert gate["metric"] == "f1" and gate["direction"] == "higher_is_better"
    assert f1(evaluations, "base") - f1(evaluations, "candidate") > gate["tolerance"]
    assert evaluations["base"].rows == evaluations["candidate"].rows
    assert set(evaluations["base"].metrics) == {"f1", "precision", "recall", "roc_auc"}


def test_candidate_features_hold_invalid_values_and_base_features_none(
    invalid_values: dict[str, InvalidValueCount], customers: Path
) -> None:
    base, candidate = invalid_values["base"], invalid_values["candidate"]
    assert base.total == 0
    assert candidate.total > 0
    assert set(candidate.by_column) == {"monthly_spend"}
    assert candidate.rows == base.rows
    brand_new_accounts = count_source_anomalies(customers, "account_age_months")
    assert candidate.total == brand_new_accounts, "one invalid monthly_spend per zero-month account"


def test_guard_restores_f1_within_tolerance_and_removes_invalid_values(
    evaluations: dict[str, EvaluationResult], invalid_values: dict[str, InvalidValueCount], policy: dict
) -> None:
    assert f1(evaluations, "repaired") >= f1(evaluations, "base") - policy["gate"]["tolerance"]
    assert invalid_values["repaired"].total == 0


def test_guard_fits_the_repair_limits(workspaces: dict[str, Path], policy: dict) -> None:
    before = (workspaces["candidate"] / FEATURES_MODULE).read_text().splitlines()
    after = (workspaces["repaired"] / FEATURES_MODULE).read_text().splitlines()
    changed = [
        line
        for line in difflib.unified_diff(before, after, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert changed == ["+" + line for line in GUARD.splitlines()]
    assert len(changed) <= policy["repair"]["max_changed_lines"]


def test_workspace_tests_pass_on_every_commit(test_runs: dict[str, TestRun]) -> None:
    for name, run in test_runs.items():
        assert run.succeeded, name
        assert run.passed >= 3 and run.failed == 0 and run.errors == 0, name


def test_commands_leave_the_workspaces_unchanged(
    workspaces: dict[str, Path],
    digests_before: dict[str, dict[str, str]],
    evaluations: dict[str, EvaluationResult],
    invalid_values: dict[str, InvalidValueCount],
    test_runs: dict[str, TestRun],
) -> None:
    for name, path in workspaces.items():
        assert tree_digests(path) == digests_before[name], name


# DataHub graph


def test_metadata_file_is_what_the_builder_writes(scenario: Scenario) -> None:
    result = run_command(
        ["python", "build_metadata.py", "--check"], cwd=scenario.datahub_metadata.parent, timeout_s=120
    )
    assert result.returncode == 0, result.stderr


def test_metadata_round_trips_through_the_sdk(scenario: Scenario) -> None:
    raw = json.loads(scenario.datahub_metadata.read_text())
    records = list(read_metadata_file(scenario.datahub_metadata))
    assert len(records) == len(raw)
    for record, obj in zip(records, raw, strict=True):
        assert isinstance(record, MetadataChangeProposalWrapper)
        assert record.validate()
        assert record.to_obj(simplified_structure=True) == obj
    by_aspect = {(record.entityUrn, record.aspectName): record.aspect for record in records}
    model = by_aspect[(scenario.model_urn, "mlModelProperties")]
    assert model.trainingJobs and model.mlFeatures and model.groups and model.deployments
    deployment = by_aspect[(model.deployments[0], "mlModelDeploymentProperties")]
    assert deployment.status == "IN_SERVICE"
    raw_schema = by_aspect[(scenario.data.dataset_urn, "schemaMetadata")]
    assert {"account_age_months", "total_spend"} <= {field.fieldPath for field in raw_schema.fields}


def test_metadata_features_match_the_feature_matrix(
    scenario: Scenario, workspaces: dict[str, Path], customers: Path, policy: dict, tmp_path: Path
) -> None:
    header_file = build_features(workspaces["base"], customers, tmp_path / "features.csv", policy["workspace"])
    with header_file.open(newline="") as handle:
        header = next(csv.reader(handle))
    records = list(read_metadata_file(scenario.datahub_metadata))
    features = [
        record.entityUrn.rsplit(",", 1)[-1].rstrip(")")
        for record in records
        if record.aspectName == "mlFeatureProperties"
    ]
    assert features == header
