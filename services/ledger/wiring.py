"""Wiring of the ledger service: consumes every ModelGuard topic into the append-only store.

``definition`` wires the sink to its ports only; ``services/ledger/bootstrap.py`` builds the production ports from
Settings (the composition root)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.exc import OperationalError

from contracts.service_channels import SERVICE_CHANNELS
from libs.bus.handler_errors import TransientFailure
from libs.bus.runtime import ServiceDefinition, Timer
from libs.clock import Clock, utc_now
from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore
from libs.ledger.external_head import HeadSink
from libs.ledger.sealing import seal_checkpoint
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from services.ledger.handler import CauseNotAppendedYet, LedgerSink
from services.ledger.incident_metrics import IncidentMetrics

NAME = "ledger"
log = logging.getLogger("modelguard.ledger")


@dataclass(frozen=True)
class LedgerPorts:
    """What the ledger writes: the append-only store (its schema created), the places each signed checkpoint's head
    is also recorded (a file, a log), how often it seals a checkpoint, when an open incident counts as stuck, and the
    clock of its metrics."""

    store: LedgerStore
    heads: tuple[HeadSink, ...]
    checkpoint_interval_s: float = 10.0
    stuck_after_s: float = 900.0
    clock: Clock = utc_now


def definition(ports: LedgerPorts, key: SigningKey) -> ServiceDefinition:
    """``key`` signs the ledger's checkpoints (the service's own key)."""
    store, heads = ports.store, list(ports.heads)
    if (latest := store.latest_checkpoint()) is not None:  # a ledger from before the external heads; never backwards
        for head in heads:
            head.record(latest)
    interval = ports.checkpoint_interval_s
    sink = LedgerSink(store, checkpoint=lambda: seal_checkpoint(store, key, heads), checkpoint_interval_s=interval)

    metrics = IncidentMetrics(store, ports.stuck_after_s, clock=ports.clock)

    def append(signed: SignedEvent) -> None:
        append_poll([signed], one=True)

    def append_poll(events: Sequence[SignedEvent], one: bool = False) -> list[SignedEvent]:
        """A consumer poll's events in one transaction; returns those waiting for their causes."""
        try:
            outcome = sink.append_batch(events)
        except OperationalError as exc:  # the database is away: retry, never drop an event
            raise TransientFailure(str(exc)) from exc
        for signed, result in outcome.appended:
            if result.appended:
                try:
                    metrics.recorded(signed)
                except Exception:  # a metric must never cost an event: it is appended already
                    meta = signed.event.meta
                    log.exception("incident metrics missed %s %s", meta.event_type, meta.event_id)
        if one and outcome.deferred:
            meta = outcome.deferred[0].event.meta
            raise CauseNotAppendedYet(f"{meta.event_type} {meta.event_id} waits for its cause {meta.causation_id}")
        return outcome.deferred

    return ServiceDefinition(
        NAME,
        MODELGUARD_VERSION,
        SERVICE_CHANNELS[NAME],
        clock=ports.clock,
        sink=append,
        batch_sink=append_poll,
        timers=(Timer("checkpoint", max(0.5, interval / 2), sink.tick),),
        collectors=metrics.collectors,
        on_stop=sink.seal_uncovered,
    )
