"""diagnose_inputs end to end on small trees and windows: the workspace's commands really run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from contracts.common import PolicyRef
from contracts.context_snapshot import ContextSnapshot
from contracts.events.context import ContextCollected
from contracts.events.diagnosis import DiagnosisAbstained, DiagnosisCompleted
from modelguard.audit_rerun import payload_digest
from services.diagnoser.diagnosis import diagnose_inputs
from services.diagnoser.inputs import CounterfactualMetrics, DataWindow, GateSpec, IncidentInputs, WorkspaceConfig
from services.diagnoser.markdown_report import render_markdown
from services.diagnoser.report import diagnosis_event
from services.diagnoser.thresholds import central_thresholds
from tests.support.sample_events import artifact, gate, workspace

FEATURES = """import argparse
import csv

from toy.calc import per_month

parser = argparse.ArgumentParser()
parser.add_argument("--data")
parser.add_argument("--output")
args = parser.parse_args()
with open(args.data, newline="") as handle:
    rows = list(csv.DictReader(handle))
with open(args.output, "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["per_month", "visits"])
    for row in rows:
        writer.writerow([repr(per_month(float(row["total"]), float(row["months"]))), row.get("visits", "")])
"""
GUARDED = "def per_month(total, months):\n    if months <= 0:\n        return 0.0\n    return total / months\n"
UNGUARDED = "import numpy as np\n\n\ndef per_month(total, months):\n    return float(np.float64(total) / months)\n"
TRAIN = "C = 1.0\n"
CONFIG = WorkspaceConfig(
    evaluate=("python", "evaluate.py", "{train}", "{eval}"),
    label="churned",
    feature_modules=("toy/calc.py",),
    features=("python", "-m", "toy.features", "--data", "{data}", "--output", "{output}"),
    timeout_s=60,
)
GATE = GateSpec(metric="f1", direction="higher_is_better", tolerance=0.02)
FETCHED = "2025-01-01T00:00:00+00:00"


def tree(root: Path, calc: str, train: str = TRAIN) -> Path:
    for relpath, text in {
        "toy/__init__.py": "",
        "toy/calc.py": calc,
        "toy/features.py": FEATURES,
        "toy/train.py": train,
    }.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def rows(seed: int, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "total": rng.gamma(2, 40, n).round(2),
            "months": rng.integers(0, 30, n),
            "visits": rng.integers(0, 9, n),
            "churned": rng.binomial(1, 0.3, n),
        }
    )


def window(root: Path, name: str, data: pd.DataFrame) -> DataWindow:
    root.mkdir(parents=True)
    data.to_csv(root / "train.csv", index=False)
    data.to_csv(root / "eval.csv", index=False)
    return DataWindow(name=name, train=root / "train.csv", eval=root / "eval.csv")  # type: ignore[arg-type]


def inputs(
    tmp_path: Path, calc: str, metrics: tuple[float, float, float, float], incident: pd.DataFrame, train: str = TRAIN
) -> IncidentInputs:
    return IncidentInputs(
        base_dir=tree(tmp_path / "base", GUARDED),
        candidate_dir=tree(tmp_path / "candidate", calc, train),
        approval=window(tmp_path / "approval", "approval", rows(1)),
        incident=window(tmp_path / "incident", "incident", incident),
        workspace=CONFIG,
        gate=GATE,
        metrics=CounterfactualMetrics(*metrics),
    )


def test_a_feature_transformation_with_its_location_hints_and_report(tmp_path: Path) -> None:
    outcome = diagnose_inputs(inputs(tmp_path, UNGUARDED, (0.8, 0.8, 0.6, 0.6), rows(2)), central_thresholds())
    assert (outcome.decision, outcome.chosen_hypothesis, outcome.cause_location) == (
        "diagnosed",
        "feature_transformation",
        "code",
    )
    assert outcome.suspected is not None and outcome.suspected.file == "toy/calc.py"
    assert outcome.suspected.divisor == "months"
    assert outcome.invalid_values.base == 0 and outcome.invalid_values.candidate > 0
    assert [s.function for s in outcome.repair_hints.changed_functions] == ["per_month"]
    assert {"total", "months", "visits"} <= set(outcome.repair_hints.read_columns)
    report = render_markdown(outcome)
    assert "# Diagnosis: feature_transformation" in report and "Why the runners-up lost" in report
    json.dumps(outcome.model_dump(mode="json"))


def test_a_training_parameter_change(tmp_path: Path) -> None:
    case = inputs(tmp_path, GUARDED, (0.8, 0.8, 0.6, 0.6), rows(2), train="C = 0.0001\n")
    outcome = diagnose_inputs(case, central_thresholds())
    assert outcome.chosen_hypothesis == "training_config_change"
    assert outcome.repair_hints.changed_functions[0].file == "toy/train.py"


def test_a_renamed_column_upstream(tmp_path: Path) -> None:
    incident = rows(2).rename(columns={"visits": "visit_count"})
    outcome = diagnose_inputs(inputs(tmp_path, GUARDED, (0.8, 0.6, 0.8, 0.6), incident), central_thresholds())
    assert (outcome.chosen_hypothesis, outcome.cause_location) == ("upstream_schema_change", "data")
    assert [(r.old, r.new) for r in outcome.repair_hints.renamed_columns] == [("visits", "visit_count")]


def test_a_mixed_cause_abstains(tmp_path: Path) -> None:
    outcome = diagnose_inputs(inputs(tmp_path, UNGUARDED, (0.8, 0.7, 0.7, 0.6), rows(2)), central_thresholds())
    assert outcome.decision == "abstained" and outcome.abstention_code == "mixed_cause"


def test_every_threshold_is_required() -> None:
    policy = central_thresholds().model_dump()
    del policy["psi_drift"]
    with pytest.raises(ValueError, match="psi_drift"):
        diagnose_inputs(None, policy)  # type: ignore[arg-type]


def collected(context: ContextSnapshot | None = None) -> ContextCollected:
    context = context or ContextSnapshot(model_urn="urn:li:mlModel:m", provider="file", fetched_at=FETCHED)
    return ContextCollected(
        run_id="run-1",
        workspace=workspace(),
        policy=PolicyRef(name="toy", artifact=artifact(b"policy")),
        gate=gate(),
        context=context,
        context_digest=context.digest().removeprefix("sha256:"),
    )


def test_the_event_carries_hints_counterfactual_location_and_markdown(tmp_path: Path) -> None:
    outcome = diagnose_inputs(inputs(tmp_path, UNGUARDED, (0.8, 0.8, 0.6, 0.6), rows(2)), central_thresholds())
    event = diagnosis_event(collected(), outcome)
    assert isinstance(event, DiagnosisCompleted) and event.hypothesis == "feature_transformation"
    report = event.report
    assert report.cause_location == "code" and report.counterfactual["candidate_on_incident"] == 0.6
    assert report.repair_hints.changed_functions[0].divisor == "months"
    assert report.suspect is not None and report.evidence[0].strength is not None
    assert report.markdown == render_markdown(outcome)
    assert "unguarded division by `months`" in report.markdown


def test_an_abstention_event_carries_the_markdown_too(tmp_path: Path) -> None:
    outcome = diagnose_inputs(inputs(tmp_path, UNGUARDED, (0.8, 0.7, 0.7, 0.6), rows(2)), central_thresholds())
    event = diagnosis_event(collected(), outcome)
    assert isinstance(event, DiagnosisAbstained)
    assert event.report.markdown.startswith("# Diagnosis: abstained") and "mixed_cause" in event.report.markdown


def test_the_same_incident_in_other_folders_gives_the_same_report_and_event(tmp_path: Path) -> None:
    """Audits re-compute the event and compare digests: no folder names, no clock in the report."""
    events = []
    for folder in ("first", "second-with-a-longer-name"):
        case = inputs(tmp_path / folder, UNGUARDED, (0.8, 0.8, 0.6, 0.6), rows(2))
        event = diagnosis_event(collected(), diagnose_inputs(case, central_thresholds()))
        assert folder not in event.report.markdown and str(tmp_path) not in event.model_dump_json()
        events.append(event)
    assert events[0].report.markdown == events[1].report.markdown
    assert payload_digest(events[0]) == payload_digest(events[1])
