"""Building the next event of an incident from the events it was computed from."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel

from contracts.meta import EventMeta
from contracts.registry import Event, contract_of_payload
from libs.events.codec import SignedEvent
from libs.events.identity import event_id_for


def _ancestry(causes: Sequence[SignedEvent]) -> tuple[str, ...]:
    """Every envelope the causes were computed from, then the causes themselves, without repeats."""
    seen: dict[str, None] = {}
    for cause in causes:
        for digest in (*cause.event.meta.ancestry, cause.digest):
            seen.setdefault(digest, None)
    return tuple(seen)


def next_event(
    payload: BaseModel,
    *,
    producer: str,
    producer_version: str,
    occurred_at: datetime,
    causes: Sequence[SignedEvent] = (),
    incident_id: str | None = None,
    extra_input_digests: Sequence[str] = (),
) -> Event[BaseModel]:
    """The event id is a digest of producer, incident, type and the identities of its inputs."""
    contract = contract_of_payload(payload)
    if incident_id is None:
        if not causes:
            raise ValueError("a first event needs an incident id")
        incident_id = causes[0].event.meta.incident_id
    input_digests = tuple(sorted({c.digest for c in causes} | set(extra_input_digests)))
    # The id names the causes by event id, not by envelope digest: a cause recomputed after a crash has a
    # new timestamp (so a new envelope) but the same id, and so do the events computed from it.
    identity_inputs = [c.event.meta.event_id for c in causes] + list(extra_input_digests)
    meta = EventMeta(
        event_id=event_id_for(producer, incident_id, contract.event_type, identity_inputs),
        event_type=contract.event_type,
        event_version=contract.version,
        incident_id=incident_id,
        producer=producer,
        producer_version=producer_version,
        causation_id=causes[0].event.meta.event_id if causes else None,
        input_digests=input_digests,
        ancestry=_ancestry(causes),
        occurred_at=occurred_at,
    )
    return contract.event_model(meta=meta, payload=payload)
