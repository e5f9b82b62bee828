"""diagnose_inputs end to end on a small real repository (tests/support/toy_repository.py): its predict and
features commands really run, and every figure is computed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from contracts.catalogue import Hypothesis
from contracts.events.diagnosis import DiagnosisAbstained, DiagnosisCompleted
from libs.policy.diagnosis import DiagnosisPolicy, central_diagnosis_policy
from modelguard.audit_rerun import payload_digest
from services.diagnoser.diagnosis import diagnose_inputs
from services.diagnoser.inputs import IncidentInputs
from services.diagnoser.markdown_report import render_markdown
from services.diagnoser.report import diagnosis_event
from tests.support import toy_repository as toy
from tests.support.sample_events import collected

RENAMED = tuple(toy.customers(seed).rename(columns={"visits": "visit_count"}) for seed in (21, 22))


def inputs(tmp_path: Path, calc: str = toy.GUARDED, incident=None, train: str = toy.TRAIN) -> IncidentInputs:
    return toy.toy_inputs(tmp_path, candidate={"calc": calc, "train": train}, incident=incident)


def test_a_feature_transformation_with_its_location_hints_and_report(tmp_path: Path) -> None:
    outcome = diagnose_inputs(inputs(tmp_path, toy.UNGUARDED), central_diagnosis_policy())
    assert (outcome.decision, outcome.chosen_hypothesis, outcome.cause_location) == (
        "diagnosed",
        "feature_transformation",
        "code",
    )
    assert outcome.chosen_hypothesis is Hypothesis.FEATURE_TRANSFORMATION
    assert outcome.top_hypothesis is Hypothesis.FEATURE_TRANSFORMATION
    assert outcome.suspected is not None and outcome.suspected.file == "toy/calc.py"
    assert outcome.suspected.divisor == "months"
    assert outcome.invalid_values.base == 0 and outcome.invalid_values.candidate > 0
    assert [s.function for s in outcome.repair_hints.changed_functions] == ["per_month"]
    assert {"total", "months", "visits", "plan"} <= set(outcome.repair_hints.read_columns)
    report = render_markdown(outcome)
    assert report.startswith("# Diagnosis: feature_transformation (cause in the code)\n")
    assert "\n**feature_transformation** scores " in report and "Why the runners-up lost" in report
    assert "Hypothesis." not in report and "CauseLocation." not in report
    json.dumps(outcome.model_dump(mode="json"))


def test_a_training_parameter_change(tmp_path: Path) -> None:
    case = inputs(tmp_path, train="C = 0.00001\n")
    outcome = diagnose_inputs(case, central_diagnosis_policy())
    assert outcome.chosen_hypothesis == "training_config_change"
    assert outcome.repair_hints.changed_functions[0].file == "toy/train.py"


def test_a_renamed_column_upstream(tmp_path: Path) -> None:
    outcome = diagnose_inputs(inputs(tmp_path, incident=RENAMED), central_diagnosis_policy())
    assert (outcome.chosen_hypothesis, outcome.cause_location) == ("upstream_schema_change", "data")
    assert [(r.old, r.new) for r in outcome.repair_hints.renamed_columns] == [("visits", "visit_count")]


def test_a_mixed_cause_abstains(tmp_path: Path) -> None:
    """A milder training parameter and a renamed column, each about half of the drop."""
    outcome = diagnose_inputs(inputs(tmp_path, train="C = 0.03\n", incident=RENAMED), central_diagnosis_policy())
    assert outcome.decision == "abstained" and outcome.abstention_code == "mixed_cause"


def test_every_threshold_is_required() -> None:
    policy = central_diagnosis_policy().model_dump()
    del policy["psi_drift"]
    with pytest.raises(ValidationError, match="psi_drift"):
        DiagnosisPolicy.model_validate(policy)


def test_the_event_carries_hints_counterfactual_location_and_markdown(tmp_path: Path) -> None:
    outcome = diagnose_inputs(inputs(tmp_path, toy.UNGUARDED), central_diagnosis_policy())
    event = diagnosis_event(collected(), outcome)
    assert isinstance(event, DiagnosisCompleted) and event.hypothesis == "feature_transformation"
    report = event.report
    assert report.cause_location == "code"
    assert report.counterfactual["candidate_on_incident"] == outcome.counterfactual["candidate_on_incident"] < 0.7
    assert report.metric_source == "referee" and report.evaluations == 4 and len(report.runs) == 4
    assert report.repair_hints.changed_functions[0].divisor == "months"
    assert report.suspect is not None and report.evidence[0].strength is not None
    assert report.markdown == render_markdown(outcome)
    assert "unguarded division by `months`" in report.markdown


def test_an_abstention_event_carries_the_markdown_too(tmp_path: Path) -> None:
    outcome = diagnose_inputs(inputs(tmp_path, train="C = 0.03\n", incident=RENAMED), central_diagnosis_policy())
    event = diagnosis_event(collected(), outcome)
    assert isinstance(event, DiagnosisAbstained)
    assert event.report.markdown.startswith("# Diagnosis: abstained") and "mixed_cause" in event.report.markdown
    assert isinstance(outcome.top_hypothesis, Hypothesis) and outcome.chosen_hypothesis is None
    assert f"\nBest candidate: {outcome.top_hypothesis.value}.\n" in event.report.markdown
    assert "Hypothesis." not in event.report.markdown


def test_the_same_incident_in_other_folders_gives_the_same_report_and_event(tmp_path: Path) -> None:
    """Audits re-compute the event and compare digests: no folder names, no clock in the report."""
    events = []
    for folder in ("first", "second-with-a-longer-name"):
        case = inputs(tmp_path / folder, toy.UNGUARDED)
        event = diagnosis_event(collected(), diagnose_inputs(case, central_diagnosis_policy()))
        assert folder not in event.report.markdown and str(tmp_path) not in event.model_dump_json()
        events.append(event)
    assert events[0].report.markdown == events[1].report.markdown
    assert payload_digest(events[0]) == payload_digest(events[1])
