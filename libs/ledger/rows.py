"""What the ledger hands back: plain immutable values, never database objects."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple


class AppendResult(NamedTuple):
    """`appended` is False when the event id was already in the ledger; the rest then names that row. A named tuple:
    one is built per event appended, at a third of a frozen dataclass's cost."""

    appended: bool
    position: int
    sequence: int
    hash: str
    event_id: str
    envelope_digest: str


@dataclass(frozen=True)
class LedgerRow:
    position: int
    incident_id: str
    sequence: int
    event_id: str
    event_type: str
    event_version: str
    producer: str
    signer_keyid: str
    causation_id: str | None
    envelope: str
    envelope_digest: str
    prev_hash: str
    hash: str
    appended_at: datetime

    @property
    def envelope_bytes(self) -> bytes:
        return self.envelope.encode("utf-8")


@dataclass(frozen=True)
class IncidentHead:
    """The last event of one incident; `sequence` is also the incident's event count."""

    incident_id: str
    sequence: int
    position: int
    event_id: str
    event_type: str
    hash: str
    appended_at: datetime


@dataclass(frozen=True)
class CheckpointRow:
    position: int
    event_count: int
    head_hash: str
    signer_keyid: str
    envelope: str
    created_at: datetime
