"""`modelguard republish`: re-send the last logged event of every unfinished incident, after a broker loss.

The envelope goes out byte for byte as it was logged, to its topic, keyed by its incident, with the headers a
service puts on it. Re-sending is safe: event ids are deterministic, the ledger ignores an event id it holds, and
a service that already handled the input re-sends the outputs it recorded instead of recomputing them, so an
output lost with the broker comes back too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from contracts.registry import contract_for
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
    projections = replay(store, registry)
    heads = [h for h in store.incidents() if incident_id in (None, h.incident_id)]
    resends: list[Resend] = []
    for head in heads:
        projection = projections[head.incident_id]
        if projection.last_event_type in TERMINAL:
            continue
        row = store.event(projection.last_event_id)
        if row is None:  # appended between the replay and this read: the incident moved on by itself
            continue
        signed = open_envelope(row.envelope_bytes, registry)
        if signed.envelope_bytes != row.envelope_bytes:
            raise ValueError(f"the ledger holds {row.event_id} in non-canonical form; run modelguard verify")
        resends.append(Resend(signed))
    return resends


def resend(bootstrap: str, resends: list[Resend], idempotence: bool = False) -> None:
    asyncio.run(publish_signed(bootstrap, [r.signed for r in resends], idempotence))


def resend_lines(resends: list[Resend], sent: bool) -> list[str]:
    verb = "re-sent" if sent else "would re-send"
    lines: list[str] = []
    for r in resends:
        meta = r.signed.event.meta
        lines.append(f"{meta.incident_id}  {verb} {meta.event_type} {meta.event_id} to {r.topic}")
    return lines or ["no unfinished incident: nothing to re-send"]
