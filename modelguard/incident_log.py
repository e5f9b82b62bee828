"""Reading an incident back from the ledger as verified, typed events."""

from __future__ import annotations

import time
from collections.abc import Callable

from libs.events.codec import SignedEvent, open_envelope
from libs.ledger import LedgerStore
from libs.signing.keys import KeyRegistry


def incident_events(store: LedgerStore, incident_id: str, registry: KeyRegistry) -> list[SignedEvent]:
    """The incident's events, each verified as it was when it arrived (`open_envelope`)."""
    return [open_envelope(row.envelope_bytes, registry) for row in store.incident_events(incident_id)]


class WaitTimedOut(TimeoutError):
    pass


class IncidentFailed(RuntimeError):
    pass


def wait_for(
    store: LedgerStore,
    incident_id: str,
    registry: KeyRegistry,
    done: Callable[[list[SignedEvent]], bool],
    timeout_s: float,
    poll_s: float = 0.25,
    failure: Callable[[], str | None] = lambda: None,
    failure_every_s: float = 5.0,
) -> list[SignedEvent]:
    """Poll the ledger until `done`; `failure` (checked now and then) can end the wait early with a reason."""
    deadline = time.monotonic() + timeout_s
    next_failure_check = time.monotonic() + failure_every_s
    while True:
        events = incident_events(store, incident_id, registry)
        if done(events):
            return events
        if time.monotonic() > next_failure_check:
            next_failure_check = time.monotonic() + failure_every_s
            reason = failure()
            if reason:
                raise IncidentFailed(f"{incident_id}: {reason}")
        if time.monotonic() > deadline:
            seen = ", ".join(e.event.meta.event_type for e in events) or "nothing"
            raise WaitTimedOut(f"{incident_id} did not finish within {timeout_s:.0f}s (ledger has: {seen})")
        time.sleep(poll_s)


TERMINAL = {"Published", "EvaluationPassed", "EnvironmentFailed"}


def run_finished(run_id: str) -> Callable[[list[SignedEvent]], bool]:
    def finished(events: list[SignedEvent]) -> bool:
        return any(
            e.event.meta.event_type in TERMINAL and getattr(e.event.payload, "run_id", None) == run_id for e in events
        )

    return finished
