"""What ModelGuard has concluded about one CI run of an incident, from the incident's verified events."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from libs.events.codec import SignedEvent


@dataclass(frozen=True)
class Verdict:
    """`status`: pending (reported, gate not applied yet), passed (the gate passed: done), regressed (the gate
    failed; the investigation is under way) or published (the investigation's finding is published: done)."""

    incident_id: str
    run_id: str
    status: str
    finished: bool
    outcome: str | None
    gate: dict[str, Any] | None
    events: list[str]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def verdict_of(incident_id: str, run_id: str, events: Sequence[SignedEvent]) -> Verdict:
    of_run = [e for e in events if getattr(e.event.payload, "run_id", None) == run_id]
    types = [e.event.meta.event_type for e in of_run]
    payloads = {e.event.meta.event_type: e.event.payload for e in of_run}
    gate_source = payloads.get("EvaluationPassed") or payloads.get("RegressionDetected")
    gate = gate_source.gate.model_dump(mode="json") if gate_source is not None else None
    if "Published" in payloads:
        status, outcome = "published", payloads["Published"].outcome
    elif "EvaluationPassed" in payloads:
        status, outcome = "passed", None
    elif "RegressionDetected" in payloads:
        status, outcome = "regressed", None
    else:
        status, outcome = "pending", None
    return Verdict(incident_id, run_id, status, status in ("passed", "published"), outcome, gate, types)
