"""The ledger's two tables. Rows are only ever inserted; the database refuses anything else.

`ledger_events.hash` chains one incident's events: sha256(bytes.fromhex(prev_hash) || sha256(envelope bytes)),
with 64 zeros as the `prev_hash` of an incident's first event (`chain_links`: rows appended before 2026-12-05
hash the envelope itself in place of its digest). `envelope` is the canonical envelope
JSON, exactly the bytes that were signed and hashed (ASCII: base64 payload and signatures).
"""

# No `from __future__ import annotations`: SQLModel reads the annotations at class creation.

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, Integer, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

GENESIS_HASH = "0" * 64

EVENTS_TABLE = "ledger_events"
CHECKPOINTS_TABLE = "ledger_checkpoints"

# BIGINT in PostgreSQL; in SQLite only INTEGER PRIMARY KEY is the autoincrementing rowid.
_POSITION = BigInteger().with_variant(Integer(), "sqlite")


class LedgerEvent(SQLModel, table=True):
    """One event. Both unique keys lead with the incident, so an incident's entries sit together in each index and
    a batch of appends touches few index pages: `(incident_id, sequence)` is the chain, `(incident_id, event_id)`
    makes a repeat a no-op (an event id names its incident: it is a digest over it). Events are looked up by id or
    envelope digest within their incident. A ledger created before this layout keeps its own unique `event_id` and
    its `envelope_digest` index; every query here works on both layouts."""

    __tablename__ = EVENTS_TABLE
    __table_args__ = (
        UniqueConstraint("incident_id", "sequence", name="uq_ledger_events_incident_sequence"),
        UniqueConstraint("incident_id", "event_id", name="uq_ledger_events_incident_event"),
        {"sqlite_autoincrement": True},
    )

    position: int | None = Field(default=None, primary_key=True, sa_type=_POSITION)
    incident_id: str = Field(max_length=64)
    sequence: int = Field(ge=1)
    event_id: str = Field(max_length=64)
    event_type: str = Field(max_length=64)
    event_version: str = Field(max_length=16)
    producer: str = Field(max_length=64)
    signer_keyid: str = Field(max_length=128)
    causation_id: str | None = Field(default=None, max_length=64)
    envelope: str = Field(sa_type=Text)
    envelope_digest: str = Field(max_length=64)
    prev_hash: str = Field(max_length=64)
    hash: str = Field(max_length=64)
    appended_at: datetime = Field(sa_type=DateTime(timezone=True))


class LedgerCheckpoint(SQLModel, table=True):
    """A signed statement that the ledger held exactly these events up to `position`.

    `head_hash` is the head of the global chain: g_0 = 64 zeros and, for every event in position order,
    g = sha256(bytes.fromhex(g) || bytes.fromhex(event.hash)). Each event hash already commits to its
    incident's whole chain, so the global head commits to every event at or below `position`, their
    order included: a dropped, inserted or altered event or incident changes it.
    """

    __tablename__ = CHECKPOINTS_TABLE

    position: int = Field(primary_key=True, sa_type=_POSITION, sa_column_kwargs={"autoincrement": False})
    event_count: int = Field(ge=0)
    head_hash: str = Field(max_length=64)
    signer_keyid: str = Field(max_length=128)
    envelope: str = Field(sa_type=Text)
    created_at: datetime = Field(sa_type=DateTime(timezone=True))
