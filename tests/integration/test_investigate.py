"""`modelguard investigate`: the same handlers without a broker give the same verifiable incident, and the CI
job's exit code is the gate's."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.ledger import LedgerStore, verify_incident
from libs.settings import load_settings
from libs.signing.keys import KeyRegistry
from modelguard.audit_rerun import rerun_incident, rerun_settings, service_definitions
from modelguard.cli import main
from modelguard.investigate import investigate
from modelguard.stack import SCENARIOS

CHURN = SCENARIOS / "churn-monthly-spend"


def test_investigate_runs_every_phase_in_process_and_logs_a_verifiable_incident(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    settings = load_settings()
    seen: list[str] = []
    events = investigate(settings, CHURN, "ci-1", 7, lambda e: seen.append(e.event.meta.event_type))
    assert (
        seen
        == [e.event.meta.event_type for e in events]
        == [
            "EvaluationReported",
            "RegressionDetected",
            "ContextCollected",
            "DiagnosisCompleted",
            "RepairProposed",
            "RepairValidated",
            "Published",
        ]
    )
    incident = events[0].event.meta.incident_id
    store, registry = LedgerStore(settings.ledger_url), KeyRegistry.load(settings.key_registry_path)
    assert verify_incident(store, incident, registry).ok
    rows = rerun_incident(store, registry, incident, service_definitions(rerun_settings(settings, tmp_path / "rerun")))
    assert len(rows) == 5 and all(r.equal for r in rows)
    assert list((settings.publish_dir / "github").rglob("*.md"))

    # the CLI's exit code follows the gate: the regression is real, so a CI job running it fails
    assert main(["investigate", "--scenario", str(CHURN), "--run-id", "ci-2"]) == 1
