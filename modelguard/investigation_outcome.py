"""The outcome of one investigated incident, read off its signed events: the summary and the exit code.

Outcomes and exit codes are documented in docs/scenarios.md; every figure comes from the events; the outcome
itself is libs.events.outcome's, which the detector's verdict shares.
"""

from __future__ import annotations

from typing import Any

from contracts.outcomes import Outcome
from libs.events.codec import SignedEvent
from libs.events.outcome import IncompleteInvestigation, last_payload, outcome_of
from modelguard.exit_codes import OUTCOME_EXIT_CODES


def investigation_summary(bundle_name: str, events: list[SignedEvent]) -> dict[str, Any]:
    outcome = outcome_of(events)
    last_state = next((e.event.payload for e in reversed(events) if hasattr(e.event.payload, "gate")), None)
    gate = last_state.gate if last_state is not None else None
    environment = last_payload(events, "EnvironmentFailed")
    diagnosed = last_payload(events, "DiagnosisCompleted")
    abstained = last_payload(events, "DiagnosisAbstained")
    report = (diagnosed or abstained).report if (diagnosed or abstained) else None
    proposed = last_payload(events, "RepairProposed")
    validated = last_payload(events, "RepairValidated") or last_payload(events, "ValidationFailed")
    withheld = last_payload(events, "RepairWithheld")
    return {
        "bundle": bundle_name,
        "incident_id": events[0].event.meta.incident_id,
        "outcome": outcome,
        "exit_code": OUTCOME_EXIT_CODES[outcome],
        "metric": {
            "name": gate.metric if gate else None,
            "direction": gate.direction if gate else None,
            "tolerance": gate.tolerance if gate else None,
            "baseline": gate.baseline if gate else None,
            "candidate": gate.candidate if gate else None,
            "after_repair": validated.validation.metric_after_repair if validated else None,
        },
        "environment": None
        if environment is None
        else {
            "revision": environment.revision,
            "declaration": environment.declaration,
            "digest": environment.digest or None,
            "reason": environment.reason,
            "resolver_message": environment.resolver_message,
        },
        "diagnosis": None
        if report is None
        else {
            "hypothesis": diagnosed.hypothesis if diagnosed else None,
            "confidence": diagnosed.confidence if diagnosed else None,
            "abstention_reason": abstained.reason if abstained else None,
            "cause_location": report.cause_location,
            "ranked": [{"kind": h.name, "score": h.score} for h in report.hypotheses],
        },
        "repair": None
        if proposed is None
        else {
            "strategy": proposed.patch.strategy,
            "files": list(proposed.patch.files),
            "lines": proposed.patch.added_lines + proposed.patch.removed_lines,
            "validated": outcome == Outcome.REPAIR_VALIDATED,
        },
        "withheld": None if withheld is None else {"reason_code": withheld.reason_code, "reason": withheld.reason},
        "owners": list(withheld.owners_to_notify)
        if withheld
        else list(report.context_summary.model_owners)
        if report
        else [],
        "owners_by_asset": {entry.asset: [o.owner_urn for o in entry.owners] for entry in withheld.owners}
        if withheld
        else {},
        "events": [e.event.meta.event_type for e in events],
    }


__all__ = ["OUTCOME_EXIT_CODES", "IncompleteInvestigation", "investigation_summary", "outcome_of"]
