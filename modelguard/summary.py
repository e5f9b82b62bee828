"""The demo's summary: every figure read from the verified incident log, none typed in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from libs.events.codec import SignedEvent
from libs.events.outcome import last_payload

PHASE_OF = {
    "detector": "detect",
    "context": "context",
    "diagnoser": "diagnose",
    "repairer": "repair",
    "validator": "validate",
    "publisher": "publish",
}


def _of_run(events: list[SignedEvent], run_id: str) -> list[SignedEvent]:
    return [e for e in events if getattr(e.event.payload, "run_id", None) == run_id]


ASSERTION_RUN = "datahub-assertion-run"
"""The gate's run for one evaluation: created once per CI run, so a repeat run creates one and publishes nothing
else."""


def publication_kind(channel: str, identifier: str) -> str:
    """What a channel result is about: `github`, `datahub` (incidents), the gate's assertion or one of its runs."""
    if channel == "datahub" and identifier.startswith("urn:li:assertion:"):
        return ASSERTION_RUN if "#run=" in identifier else "datahub-assertion"
    return channel


def publication_statuses(events: list[SignedEvent], run_id: str) -> dict[str, str]:
    published = last_payload(_of_run(events, run_id), "Published")
    if not published:
        return {}
    return {publication_kind(c.channel, c.identifier): c.status for c in published.channels}


def timings(events: list[SignedEvent], run_id: str) -> dict[str, Any]:
    run = _of_run(events, run_id)
    by_id = {e.event.meta.event_id: e for e in run}
    per_phase: dict[str, float] = {}
    for e in run:
        cause = by_id.get(e.event.meta.causation_id or "")
        if cause is not None:
            seconds = (e.event.meta.occurred_at - cause.event.meta.occurred_at).total_seconds()
            per_phase[PHASE_OF.get(e.event.meta.producer, e.event.meta.producer)] = round(seconds, 3)
    end_to_end = (run[-1].event.meta.occurred_at - run[0].event.meta.occurred_at).total_seconds() if run else 0.0
    return {"end_to_end_s": round(end_to_end, 3), "per_phase_s": per_phase}


COMPUTED_BY = {
    "referee": "ModelGuard (referee: predictions scored against labels the workspace never saw)",
    "self_reported": "the workspace itself (self-reported)",
}


def build_summary(
    incident_id: str,
    events: list[SignedEvent],
    first_run: str,
    repeat_run: str,
    ledger: dict[str, Any],
    processes: Mapping[str, int | None],
) -> dict[str, Any]:
    first = _of_run(events, first_run)
    validated = last_payload(first, "RepairValidated") or last_payload(first, "ValidationFailed")
    diagnosis = last_payload(first, "DiagnosisCompleted")
    gate = (validated or diagnosis or last_payload(first, "RegressionDetected")).gate
    report = validated.validation if validated else None
    invalid = diagnosis.report.invalid_values if diagnosis else {}
    integrity = next((c for c in report.checks if c.name == "integrity"), None) if report else None
    return {
        "incident_id": incident_id,
        "events": [e.event.meta.event_type for e in events],
        "metric": {
            "name": gate.metric,
            "baseline": gate.baseline,
            "candidate": gate.candidate,
            "after_repair": report.metric_after_repair if report else None,
            "tolerance": gate.tolerance,
            "computed_by": COMPUTED_BY.get(gate.metric_source, gate.metric_source),
        },
        "sandbox": (integrity.values.get("sandbox") if integrity else None) or {},
        "invalid_values": {
            "before": invalid.get("candidate"),
            "after": report.invalid_values_after if report else None,
        },
        "tests": {
            "passed": report.tests_passed if report else None,
            "failed": report.tests_failed if report else None,
        },
        "diagnosis": {
            "hypothesis": diagnosis.hypothesis if diagnosis else None,
            "confidence": diagnosis.confidence if diagnosis else None,
        },
        "publication": {
            "first": publication_statuses(events, first_run),
            "repeat": publication_statuses(events, repeat_run),
        },
        "ledger": ledger,
        "processes": processes,
        "timings": timings(events, first_run),
    }
