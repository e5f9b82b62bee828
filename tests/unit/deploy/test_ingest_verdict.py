"""The verdict the CI waits for, from an incident's events: pending, regressed, then published; or passed."""

from __future__ import annotations

from libs.ledger.samples import SampleKeys, passed_incident, repaired_incident, sample_incident_id
from services.detector.ingest_verdict import verdict_of


def test_a_regression_is_pending_then_regressed_then_published_with_its_outcome() -> None:
    events = repaired_incident(SampleKeys.generate(), "v")
    incident, run = sample_incident_id("v"), "ci-v"

    statuses = [verdict_of(incident, run, events[:n]).status for n in (1, 2, len(events))]
    final = verdict_of(incident, run, events)

    assert statuses == ["pending", "regressed", "published"]
    assert final.finished and final.outcome == "repair_proposed"
    assert final.gate is not None and final.gate["regressed"] is True
    assert final.events == [e.event.meta.event_type for e in events]
    assert verdict_of(incident, "another-run", events).events == []


def test_a_passed_gate_is_finished_with_no_outcome() -> None:
    verdict = verdict_of(sample_incident_id("p"), "ci-p", passed_incident(SampleKeys.generate(), "p"))
    assert (verdict.status, verdict.finished, verdict.outcome) == ("passed", True, None)
    assert verdict.gate is not None and verdict.gate["regressed"] is False
