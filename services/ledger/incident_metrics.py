"""What the ledger's record says about incidents, as Prometheus metrics (served on the ledger service's /metrics).

Counted from the events the ledger appends (a redelivered event is appended once, so counted once):

- ``modelguard_incidents_total{outcome}``: an incident at its first outcome, in the vocabulary of
  ``libs.events.outcome`` (``gate_passed``, ``environment_failed``, ``repair_validated``, ``validation_failed``,
  ``repair_withheld``, ``no_code_repair``, ``abstained``) plus ``upstream_risk``; a CI retry of an incident is
  not a new incident;
- ``modelguard_diagnoses_total{result}``: ``completed`` or ``abstained``; the abstention rate is
  ``abstained / (completed + abstained)``;
- ``modelguard_phase_duration_seconds{phase}``: for each event with a cause, the time from its cause's
  ``occurred_at`` to its own (detect, context, diagnose, repair, validate, publish), on the producers' clocks.

Read from the store at each scrape: ``modelguard_incidents_unfinished`` (the incident's last event is not an
outcome) and ``modelguard_incidents_stuck`` (unfinished, its last event appended more than
``MODELGUARD_STUCK_AFTER_S`` ago).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from contracts.events.publication import Published
from contracts.outcomes import Outcome
from contracts.registry import Event
from libs.events.codec import SignedEvent
from libs.events.outcome import IncompleteInvestigation, outcome_of
from libs.ledger import LedgerStore
from libs.ledger.decoding import decode_row
from libs.ledger.projections import PHASES

INCIDENT_OUTCOMES = tuple(Outcome)
OUTCOME_EVENTS = frozenset({"EvaluationPassed", "EnvironmentFailed", "Published"})
"""An incident whose last event is one of these has reached an outcome."""
DIAGNOSIS_RESULTS = {"DiagnosisCompleted": "completed", "DiagnosisAbstained": "abstained"}
PHASE_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)


class IncidentMetrics:
    def __init__(
        self, store: LedgerStore, stuck_after_s: float, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self.store = store
        # registered by the runtime on the service's own registry (ServiceDefinition.collectors), not globally
        self.incidents = Counter(
            "modelguard_incidents", "incidents by outcome, at their first outcome", ["outcome"], registry=None
        )
        self.diagnoses = Counter(
            "modelguard_diagnoses", "diagnoses by result (completed, abstained)", ["result"], registry=None
        )
        self.phase_duration = Histogram(
            "modelguard_phase_duration_seconds",
            "time from an event's cause to the event, by the phase that produced it",
            ["phase"],
            buckets=PHASE_BUCKETS,
            registry=None,
        )
        for outcome in INCIDENT_OUTCOMES:  # zero is a figure too: absent would say nothing
            self.incidents.labels(outcome)
        for result in DIAGNOSIS_RESULTS.values():
            self.diagnoses.labels(result)
        self.open_incidents = OpenIncidents(store, stuck_after_s, clock)

    @property
    def collectors(self) -> tuple[Collector, ...]:
        return (self.incidents, self.diagnoses, self.phase_duration, self.open_incidents)

    def recorded(self, signed: SignedEvent) -> None:
        """After ``signed`` was appended (not after a duplicate)."""
        meta = signed.event.meta
        if meta.event_type in DIAGNOSIS_RESULTS:
            self.diagnoses.labels(DIAGNOSIS_RESULTS[meta.event_type]).inc()
        if (
            meta.causation_id is not None
            and (cause := self.store.event(meta.causation_id, meta.incident_id)) is not None
        ):
            seconds = (meta.occurred_at - decode_row(cause).meta.occurred_at).total_seconds()
            self.phase_duration.labels(PHASES.get(meta.event_type, "other")).observe(max(0.0, seconds))
        if meta.event_type in OUTCOME_EVENTS:
            outcome = self._first_outcome(signed)
            if outcome is not None:
                self.incidents.labels(outcome).inc()

    def _first_outcome(self, signed: SignedEvent) -> Outcome | None:
        """The incident's outcome when ``signed`` is its first outcome event in the log, else None."""
        meta = signed.event.meta
        events = [decode_row(row) for row in self.store.incident_events(meta.incident_id)]
        earlier = [e for e in events if e.meta.event_type in OUTCOME_EVENTS and e.meta.event_id != meta.event_id]
        if earlier:
            return None
        run_id = getattr(signed.event.payload, "run_id", None)
        run = [_Logged(e) for e in events if getattr(e.payload, "run_id", None) == run_id]
        try:
            return outcome_of(run)
        except IncompleteInvestigation:
            payload = signed.event.payload  # a publication says its outcome; an upstream risk has no run's events
            return payload.outcome if isinstance(payload, Published) else Outcome.UPSTREAM_RISK


@dataclass(frozen=True)
class _Logged:
    """A ledger row's event, its signature checked when it was appended: what ``outcome_of`` reads."""

    event: Event[Any]


class OpenIncidents(Collector):
    """Unfinished and stuck incidents, read from the store's incident heads at each scrape."""

    def __init__(self, store: LedgerStore, stuck_after_s: float, clock: Callable[[], datetime]) -> None:
        self.store = store
        self.stuck_after_s = stuck_after_s
        self.clock = clock

    def describe(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("modelguard_incidents_unfinished", "incidents without an outcome")
        yield GaugeMetricFamily("modelguard_incidents_stuck", "unfinished incidents idle past the stuck threshold")

    def collect(self) -> Iterator[Metric]:
        now = self.clock()
        unfinished = [head for head in self.store.incidents() if head.event_type not in OUTCOME_EVENTS]
        stuck = [h for h in unfinished if (now - h.appended_at).total_seconds() > self.stuck_after_s]
        yield GaugeMetricFamily(
            "modelguard_incidents_unfinished", "incidents whose last event is not an outcome", value=len(unfinished)
        )
        yield GaugeMetricFamily(
            "modelguard_incidents_stuck",
            f"unfinished incidents whose last event is older than {self.stuck_after_s:g} s (MODELGUARD_STUCK_AFTER_S)",
            value=len(stuck),
        )
