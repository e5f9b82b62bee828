"""Diagnose -> repair -> validate on the churn bundle (fixtures/scenarios/churn-monthly-spend), the way the
phases run it: the inputs are built from the bundle's trees, data windows and DataHub files, the four
counterfactual metrics come from the workspace's predictions, scored by the referee against the labels it kept
back, the repair reads the published diagnosis event and the central policy's repair section, and the
validation runs the patched copy on the incident window. Every figure asserted on here is computed by the
phases themselves."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from contracts.common import PolicyRef, WorkspaceRefs
from contracts.events.context import ContextCollected
from contracts.events.diagnosis import DiagnosisCompleted
from libs.bundle.load import Bundle, load_bundle
from libs.policy.diagnosis import DiagnosisPolicy
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.workspace.data_windows import FILE_NAMES, WINDOW_NAMES, pack_data_windows
from libs.workspace.model_evaluation import evaluate_model
from libs.workspace.repository import build_repository
from libs.workspace.snapshot import snapshot_commit, tree_digests
from services.detector.gate import apply_gate
from services.diagnoser.diagnosis import IncidentDiagnosis, diagnose_inputs
from services.diagnoser.inputs import IncidentInputs
from services.diagnoser.report import diagnosis_event
from services.repairer.handler import RepairProposal, propose_repair
from services.validator.handler import ValidationReport, validate_repair
from services.validator.request import ValidationRequest
from tests.support.bundle_inputs import bundle_inputs
from tests.support.parse_counting import counted_parses
from tests.support.sample_events import artifact
from tests.support.typed_policy import repair_section

CHURN = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios" / "churn-monthly-spend"
FEATURES_FILE = "churn_model/features.py"
FEATURE_FUNCTION = "calculate_monthly_spend"
DIVISOR = "account_age_months"
FETCHED_AT = "2025-03-10T14:05:00+00:00"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    """A private copy: the phases only read the trees, and the test checks they did."""
    copy = tmp_path_factory.mktemp("bundle") / CHURN.name
    shutil.copytree(CHURN, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return load_bundle(copy)


@pytest.fixture(scope="module")
def central() -> dict[str, Any]:
    return read_central_policy()


@pytest.fixture(scope="module")
def candidate_digests(bundle: Bundle) -> dict[str, str]:
    return tree_digests(bundle.tree("candidate"))


@pytest.fixture(scope="module")
def inputs(bundle: Bundle) -> IncidentInputs:
    return bundle_inputs(bundle.root, fetched_at=FETCHED_AT)


@pytest.fixture(scope="module")
def diagnosis(inputs: IncidentInputs, central: dict[str, Any], candidate_digests: dict[str, str]) -> IncidentDiagnosis:
    return diagnose_inputs(inputs, DiagnosisPolicy.model_validate(central["diagnosis"]))


@pytest.fixture(scope="module")
def collected(
    bundle: Bundle, inputs: IncidentInputs, central: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> ContextCollected:
    """The context phase's event for this incident: real commits, snapshots, windows, gate and policy."""
    repo = build_repository(bundle, tmp_path_factory.mktemp("repo") / bundle.name)
    base, candidate = repo.commits["base"], repo.commits["candidate"]
    windows = {w: {n: bundle.window_file(w, n) for n in FILE_NAMES} for w in WINDOW_NAMES}
    # as the detector's referee does: the base revision predicts the approval window, the candidate the incident
    # window, and ModelGuard scores both against the labels it kept back
    baseline = evaluate_model(inputs.base_dir, inputs.approval, inputs.workspace, inputs.gate)
    candidate_run = evaluate_model(inputs.candidate_dir, inputs.incident, inputs.workspace, inputs.gate)
    assert baseline.source == candidate_run.source == "referee"
    gate = apply_gate(inputs.gate, baseline.metrics, candidate_run.metrics, source="referee")
    assert inputs.context is not None
    return ContextCollected(
        run_id="run-1",
        workspace=WorkspaceRefs(
            model_urn=bundle.spec.model.urn,
            repository=bundle.spec.model.repository,
            base_commit=base,
            candidate_commit=candidate,
            base_snapshot=artifact(snapshot_commit(repo.path, base), "application/x-tar"),
            candidate_snapshot=artifact(snapshot_commit(repo.path, candidate), "application/x-tar"),
            data=artifact(pack_data_windows(windows)),
        ),
        policy=PolicyRef(name=bundle.name, artifact=artifact(effective_policy_bytes(bundle, central))),
        gate=gate,
        context=inputs.context,
        context_digest=inputs.context.digest().removeprefix("sha256:"),
    )


@pytest.fixture(scope="module")
def event(collected: ContextCollected, diagnosis: IncidentDiagnosis) -> BaseModel:
    return diagnosis_event(collected, diagnosis)


@pytest.fixture(scope="module")
def proposal(event: BaseModel, bundle: Bundle, central: dict[str, Any]) -> RepairProposal:
    as_published = DiagnosisCompleted.model_validate_json(event.model_dump_json())
    result = propose_repair(
        as_published,
        bundle.tree("candidate"),
        repair_section(central["repair"]),
        bundle.spec.workspace,
        base_dir=bundle.tree("base"),
    )
    assert isinstance(result, RepairProposal), result
    return result


@pytest.fixture(scope="module")
def validation(
    proposal: RepairProposal,
    inputs: IncidentInputs,
    collected: ContextCollected,
    diagnosis: IncidentDiagnosis,
    central: dict[str, Any],
) -> ValidationReport:
    gate = collected.gate
    return validate_repair(
        ValidationRequest(
            candidate_dir=inputs.candidate_dir,
            patch=proposal.unified_diff,
            data_csv=inputs.incident.eval,
            workspace=inputs.workspace,
            gate=inputs.gate,
            baseline_metrics={gate.metric: gate.baseline},
            expected_patch_sha256=proposal.patch_sha256,
            evaluate_placeholders=inputs.incident.placeholders(),
            features_data=inputs.incident.eval,
            diagnosed_invalid_by_column=diagnosis.invalid_values.candidate_by_column,
            window=inputs.incident,
            require_predict=central["validation"]["require_predict"],
        )
    )


def test_the_gate_fails_and_the_drop_follows_the_code(
    collected: ContextCollected, diagnosis: IncidentDiagnosis
) -> None:
    gate = collected.gate
    assert gate.regressed and gate.baseline - gate.candidate > gate.tolerance
    cells = diagnosis.counterfactual
    # the diagnosis's own runs of the same pairs give the referee's figures
    assert (cells["base_on_approval"], cells["candidate_on_incident"]) == (gate.baseline, gate.candidate)
    # same window, other code: the base code does not lose what the candidate loses
    assert cells["base_on_incident"] - cells["candidate_on_incident"] > gate.tolerance
    assert cells["base_on_approval"] - cells["candidate_on_approval"] > gate.tolerance
    assert abs(cells["base_on_approval"] - cells["base_on_incident"]) <= gate.tolerance


def test_diagnosis_names_the_feature_transformation(diagnosis: IncidentDiagnosis, central: dict[str, Any]) -> None:
    top, second = diagnosis.hypotheses[0], diagnosis.hypotheses[1]
    assert (diagnosis.decision, diagnosis.chosen_hypothesis, diagnosis.cause_location) == (
        "diagnosed",
        "feature_transformation",
        "code",
    )
    assert top.name == diagnosis.chosen_hypothesis and diagnosis.confidence == top.score
    assert top.score >= central["diagnosis"]["abstain_below"]
    assert top.score - second.score >= central["diagnosis"]["min_margin"]
    suspected = diagnosis.suspected
    assert suspected is not None
    assert (suspected.file, suspected.function, suspected.divisor) == (FEATURES_FILE, FEATURE_FUNCTION, DIVISOR)
    assert [(s.file, s.function) for s in diagnosis.repair_hints.changed_functions] == [
        (FEATURES_FILE, FEATURE_FUNCTION)
    ]


def test_the_candidate_code_makes_invalid_values_from_the_same_rows(diagnosis: IncidentDiagnosis) -> None:
    figures = diagnosis.invalid_values
    assert figures.base == 0 and figures.candidate > 0
    assert figures.candidate_by_column == {"monthly_spend": figures.candidate}
    recomputation = next(e for e in diagnosis.evidence if e.kind == "data.feature_recomputation")
    assert recomputation.values["changed_features"] == ["monthly_spend"]
    assert recomputation.values["rows"]["base"] == recomputation.values["rows"]["candidate"]


def test_the_event_carries_the_report_a_reviewer_reads(event: BaseModel, diagnosis: IncidentDiagnosis) -> None:
    assert type(event).__name__ == "DiagnosisCompleted"
    report = event.report  # type: ignore[attr-defined]
    assert report.suspect.function == FEATURE_FUNCTION and report.cause_location == "code"
    assert report.markdown.startswith("# Diagnosis: feature_transformation (cause in the code)")
    assert f"unguarded division by `{DIVISOR}`" in report.markdown
    assert "Why the runners-up lost" in report.markdown
    assert f"candidate {diagnosis.invalid_values.candidate}" in report.markdown
    summary = report.context_summary
    assert "urn:li:corpuser:dana.okafor" in summary.upstream_owners  # owner of the customers table
    assert summary.upstream_owners == sorted(summary.upstream_owners)


def test_repair_guards_the_division_in_the_feature_function(proposal: RepairProposal) -> None:
    assert (proposal.strategy, proposal.hypothesis) == ("guarded_division", "feature_transformation")
    assert (proposal.file, proposal.function, proposal.files) == (FEATURES_FILE, FEATURE_FUNCTION, (FEATURES_FILE,))
    assert (proposal.added_lines, proposal.removed_lines) == (2, 0)
    assert [line.strip() for line in proposal.inserted_lines] == [f"if {DIVISOR} <= 0:", "return 0.0"]
    assert f"+    if {DIVISOR} <= 0:" in proposal.unified_diff
    assert proposal.guard.allowed


def test_validation_passes_in_an_isolated_copy(
    validation: ValidationReport, collected: ContextCollected, bundle: Bundle, candidate_digests: dict[str, str]
) -> None:
    assert validation.passed, validation.failure_reason
    evaluation = next(check for check in validation.checks if check.name == "evaluation")
    assert evaluation.values["metric_source"] == "referee"
    assert validation.invalid_values_after == 0
    assert validation.tests_failed == 0 and validation.tests_errors == 0
    assert validation.tests_passed is not None and validation.tests_passed > 0
    gate = collected.gate
    assert validation.repaired_value is not None
    assert validation.repaired_value > gate.candidate
    assert gate.baseline - validation.repaired_value <= gate.tolerance
    assert validation.source_unchanged
    assert tree_digests(bundle.tree("candidate")) == candidate_digests


def test_one_diagnosis_parses_each_file_once(
    inputs: IncidentInputs, central: dict[str, Any], diagnosis: IncidentDiagnosis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The diff, the import closure, the readers of the code and the repair hints read the same few files: each text
    is parsed once per diagnosis (`shared_parses`; 20 parses of 6 texts before), and the outcome is the same."""
    parsed = counted_parses(monkeypatch)
    again = diagnose_inputs(inputs, DiagnosisPolicy.model_validate(central["diagnosis"]))
    assert len(parsed) == len(set(parsed)) >= 4
    assert (again.decision, again.chosen_hypothesis, again.hypotheses) == (
        diagnosis.decision,
        diagnosis.chosen_hypothesis,
        diagnosis.hypotheses,
    )
