"""The outcome of one CI run of an incident, read off its signed events (docs/scenarios.md, "Outcomes").

Shared by `modelguard investigate` (its exit code) and the detector's verdict (the CI result), so both name
an incident's end the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from contracts.outcomes import Outcome
from contracts.registry import Event

CAUSE_IN_DATA = "cause_in_data"


class IncompleteInvestigation(RuntimeError):
    """The events end before any phase reached a final outcome."""


class CarriesEvent(Protocol):
    """A signed event (``SignedEvent``), or a ledger row's event already verified when it was appended."""

    @property
    def event(self) -> Event[Any]: ...


def last_payload(events: Sequence[CarriesEvent], event_type: str) -> Any:
    """The payload of the last event of ``event_type``, or None."""
    matching = [e.event.payload for e in events if e.event.meta.event_type == event_type]
    return matching[-1] if matching else None


def outcome_of(events: Sequence[CarriesEvent]) -> Outcome:
    if last_payload(events, "EvaluationPassed") is not None:
        return Outcome.GATE_PASSED
    if last_payload(events, "EnvironmentFailed") is not None:
        return Outcome.ENVIRONMENT_FAILED
    if last_payload(events, "DiagnosisAbstained") is not None:
        return Outcome.ABSTAINED
    if last_payload(events, "RepairValidated") is not None:
        return Outcome.REPAIR_VALIDATED
    if last_payload(events, "ValidationFailed") is not None:
        return Outcome.VALIDATION_FAILED
    withheld = last_payload(events, "RepairWithheld")
    if withheld is not None:
        return Outcome.NO_CODE_REPAIR if withheld.reason_code == CAUSE_IN_DATA else Outcome.REPAIR_WITHHELD
    types = ", ".join(e.event.meta.event_type for e in events) or "none"
    raise IncompleteInvestigation(f"no final outcome among the events ({types})")
