"""`modelguard republish`: re-send the last logged event of every unfinished incident, after a broker loss.

The envelope goes out byte for byte as it was logged, to its topic, keyed by its incident, with the headers a
service puts on it. Re-sending is safe: event ids are deterministic, the ledger ignores an event id it holds, and
a service that already handled the input re-sends the outputs it recorded instead of recomputing them, so an
output lost with the broker comes back too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from aiokafka.errors import KafkaError

from contracts.registry import contract_for
from libs.bus.kafka_connection import KafkaConnection
from libs.bus.producer import publish_signed
from libs.events.codec import SignedEvent, open_envelope
from libs.ledger import LedgerStore, replay
from libs.signing.keys import KeyRegistry
from modelguard.incident_log import TERMINAL


@dataclass(frozen=True)
class Resend:
    signed: SignedEvent

    @property
    def topic(self) -> str:
        return contract_for(self.signed.event.meta.event_type).topic


def unfinished_last_events(store: LedgerStore, registry: KeyRegistry, incident_id: str | None = None) -> list[Resend]:
    """The last logged event of each incident whose projection has no terminal event, oldest activity first."""
    # heads first: the ledger only grows, so the replay that follows holds every incident they name
    heads = [h for h in store.incidents() if incident_id in (None, h.incident_id)]
    projections = replay(store, registry)
    resends: list[Resend] = []
    for head in heads:
        projection = projections[head.incident_id]
        if projection.last_event_type in TERMINAL:
            continue
        row = store.event(projection.last_event_id, head.incident_id)
        if row is None:  # appended between the replay and this read: the incident moved on by itself
            continue
        signed = open_envelope(row.envelope_bytes, registry)
        if signed.envelope_bytes != row.envelope_bytes:
            raise ValueError(f"the ledger holds {row.event_id} in non-canonical form; run modelguard verify")
        resends.append(Resend(signed))
    return resends


class SendFailed(Exception):
    """The broker refused or could not take a re-send (one line: the Kafka error's class and message)."""


def resend(bus: KafkaConnection | str, resends: list[Resend], idempotence: bool = False) -> None:
    try:
        asyncio.run(publish_signed(bus, [r.signed for r in resends], idempotence))
    except KafkaError as error:
        raise SendFailed(f"{type(error).__name__}: {error}") from error


RETRY_AFTER_REFUSAL_S = 1.0
"""how soon a send the broker refused is tried again (doubling up to the re-send interval)"""


@dataclass
class Republished:
    """What a republish did: every event sent, by round, and where each incident stands at the end."""

    rounds: list[list[Resend]] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    """incidents that logged a new event after their re-send"""
    waiting: dict[str, str] = field(default_factory=dict)
    """incidents that had not moved by the deadline -> the event they are still at"""
    failures: list[str] = field(default_factory=list)
    """sends the broker refused (each retried soon after, until the deadline)"""


def republish_until_moved(
    send: Callable[[list[Resend]], None],
    store: LedgerStore,
    registry: KeyRegistry,
    incident_id: str | None,
    wait_s: float,
    resend_every_s: float = 10.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Republished:
    """Re-send the last event of every unfinished incident, then watch the ledger until each has logged a new
    event or ``wait_s`` has passed, re-sending (every ``resend_every_s``, doubling) those that have not: an event
    can be lost again (a broker still settling, a consumer group still joining). ``wait_s`` 0 sends once."""
    result = Republished()
    first = unfinished_last_events(store, registry, incident_id)
    if not first:
        return result
    pending = {r.signed.event.meta.incident_id: r for r in first}
    deadline = clock() + wait_s
    interval, retry = resend_every_s, RETRY_AFTER_REFUSAL_S

    def send_pending() -> float:
        """Send what is pending; when the next send is due: a refused send is retried within seconds."""
        nonlocal interval, retry
        batch = list(pending.values())
        try:
            send(batch)
        except SendFailed as refused:
            result.failures.append(str(refused))
            wait, retry = retry, min(retry * 2, resend_every_s)
            return clock() + wait
        result.rounds.append(batch)
        if len(result.rounds) > 1:
            interval *= 2
        return clock() + interval

    next_send = send_pending()
    while pending and clock() < deadline:
        sleep(min(0.5, max(0.0, deadline - clock())))
        for incident, sent in list(pending.items()):
            head = store.incident_events(incident)
            if head and head[-1].event_id != sent.signed.event.meta.event_id:
                result.moved.append(incident)
                del pending[incident]
        if pending and clock() >= next_send:
            next_send = send_pending()
    result.waiting = {incident: r.signed.event.meta.event_type for incident, r in pending.items()}
    return result


def resend_lines(resends: list[Resend], sent: bool) -> list[str]:
    verb = "re-sent" if sent else "would re-send"
    lines: list[str] = []
    for r in resends:
        meta = r.signed.event.meta
        lines.append(f"{meta.incident_id}  {verb} {meta.event_type} {meta.event_id} to {r.topic}")
    return lines or ["no unfinished incident: nothing to re-send"]
