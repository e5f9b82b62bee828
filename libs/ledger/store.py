"""The event store: append-only, hash-chained per incident, and the only place that speaks SQL.

Appends are serialised: in PostgreSQL by one transaction-scoped advisory lock, in SQLite by BEGIN
IMMEDIATE. Serialising per incident would be enough to keep each chain unforked, but serialising all
appends also makes `position` commit in order, so a reader following `events_after(position)` never
skips a row committed late with a lower position, and a checkpoint at position P is a stable cut.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, func, insert, text
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from libs.canonical_json import sha256_hex
from libs.events.codec import SignedEvent
from libs.ledger.engine import ledger_engine, writer
from libs.ledger.rows import AppendResult, CheckpointRow, IncidentHead, LedgerRow
from libs.ledger.schema import LEDGER_LOCK_KEY, create_schema
from libs.ledger.tables import GENESIS_HASH, LedgerCheckpoint, LedgerEvent

# Built once: the append path runs these three statements and nothing else, once per batch.
_EVENTS = LedgerEvent.__table__  # type: ignore[attr-defined]
_FIND_EVENTS = select(
    _EVENTS.c.event_id, _EVENTS.c.position, _EVENTS.c.sequence, _EVENTS.c.hash, _EVENTS.c.envelope_digest
).where(_EVENTS.c.event_id.in_(bindparam("event_ids", expanding=True)))
_LAST_SEQUENCES = (
    select(_EVENTS.c.incident_id, func.max(_EVENTS.c.sequence).label("sequence"))
    .where(_EVENTS.c.incident_id.in_(bindparam("incident_ids", expanding=True)))
    .group_by(_EVENTS.c.incident_id)
    .subquery()
)
_INCIDENT_HEADS = select(_EVENTS.c.incident_id, _EVENTS.c.sequence, _EVENTS.c.hash).join(
    _LAST_SEQUENCES,
    and_(_EVENTS.c.incident_id == _LAST_SEQUENCES.c.incident_id, _EVENTS.c.sequence == _LAST_SEQUENCES.c.sequence),
)
_INSERT_EVENTS = insert(_EVENTS).returning(_EVENTS.c.position, sort_by_parameter_order=True)
_ROW_COLUMNS = (
    _EVENTS.c.position,
    _EVENTS.c.incident_id,
    _EVENTS.c.sequence,
    _EVENTS.c.event_id,
    _EVENTS.c.event_type,
    _EVENTS.c.event_version,
    _EVENTS.c.producer,
    _EVENTS.c.signer_keyid,
    _EVENTS.c.causation_id,
    _EVENTS.c.envelope,
    _EVENTS.c.envelope_digest,
    _EVENTS.c.prev_hash,
    _EVENTS.c.hash,
    _EVENTS.c.appended_at,
)
_INCIDENT_EVENTS = (
    select(*_ROW_COLUMNS).where(_EVENTS.c.incident_id == bindparam("incident_id")).order_by(_EVENTS.c.sequence)
)
_EVENTS_AFTER = (
    select(*_ROW_COLUMNS)
    .where(_EVENTS.c.position > bindparam("position"))
    .order_by(_EVENTS.c.position)
    .limit(bindparam("limit"))
)


def chain_hash(prev_hash: str, envelope: bytes) -> str:
    return sha256_hex(bytes.fromhex(prev_hash) + envelope)


class LedgerStore:
    """`LedgerStore("sqlite:///data/ledger.db")` or `LedgerStore("postgresql+psycopg://user@host/db")`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine = ledger_engine(url)
        self._writer = writer(self._engine)

    @property
    def backend(self) -> str:
        return self._engine.dialect.name

    def create_schema(self) -> None:
        with self._writer.begin() as connection:
            create_schema(connection)

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> LedgerStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ---- writing -------------------------------------------------------------------------------

    def append(self, signed: SignedEvent) -> AppendResult:
        """Append a verified event (from `open_envelope` or `seal`); an event id already present is a no-op."""
        return self.append_batch([signed])[0]

    def append_batch(self, events: Sequence[SignedEvent]) -> list[AppendResult]:
        """Append verified events in one transaction, in order, each chained to its incident's head (the heads are
        read once and carried forward in memory); an event id already present, or earlier in the batch, is a no-op
        that names the row holding it. All or nothing: the batch commits whole or not at all."""
        if not events:
            return []
        try:
            return self._append_batch_once(events)
        except IntegrityError:
            # Only a writer that bypassed the lock can get here; the rows it wrote are now visible.
            return self._append_batch_once(events)

    def _append_batch_once(self, events: Sequence[SignedEvent]) -> list[AppendResult]:
        with self._writer.begin() as connection:
            self._lock(connection)
            ids = sorted({e.event.meta.event_id for e in events})
            stored = {
                r.event_id: AppendResult(False, int(r.position), r.sequence, r.hash, r.event_id, r.envelope_digest)
                for r in connection.execute(_FIND_EVENTS, {"event_ids": ids})
            }
            incidents = sorted({e.event.meta.incident_id for e in events if e.event.meta.event_id not in stored})
            heads: dict[str, tuple[int, str]] = {
                r.incident_id: (r.sequence, r.hash)
                for r in (connection.execute(_INCIDENT_HEADS, {"incident_ids": incidents}) if incidents else ())
            }
            rows: list[dict[str, object]] = []
            planned: list[int | str] = []  # per event: the index of its new row, or the event id it repeats
            in_batch: set[str] = set()
            now = datetime.now(UTC)
            for signed in events:
                meta = signed.event.meta
                if meta.event_id in stored or meta.event_id in in_batch:
                    planned.append(meta.event_id)
                    continue
                in_batch.add(meta.event_id)
                last_sequence, prev_hash = heads.get(meta.incident_id, (0, GENESIS_HASH))
                event_hash = chain_hash(prev_hash, signed.envelope_bytes)
                heads[meta.incident_id] = (last_sequence + 1, event_hash)
                planned.append(len(rows))
                rows.append(
                    {
                        "incident_id": meta.incident_id,
                        "sequence": last_sequence + 1,
                        "event_id": meta.event_id,
                        "event_type": meta.event_type,
                        "event_version": meta.event_version,
                        "producer": meta.producer,
                        "signer_keyid": signed.envelope.signatures[0].keyid,
                        "causation_id": meta.causation_id,
                        "envelope": signed.envelope_bytes.decode("utf-8"),
                        "envelope_digest": signed.digest,
                        "prev_hash": prev_hash,
                        "hash": event_hash,
                        "appended_at": now,
                    }
                )
            positions = [int(p) for p in connection.execute(_INSERT_EVENTS, rows).scalars()] if rows else []
        appended = {
            str(row["event_id"]): AppendResult(
                True, position, row["sequence"], row["hash"], row["event_id"], row["envelope_digest"]
            )  # type: ignore[arg-type]
            for row, position in zip(rows, positions, strict=True)
        }
        results = []
        for step in planned:
            if isinstance(step, int):
                results.append(appended[str(rows[step]["event_id"])])
            else:
                results.append(dataclasses.replace(stored.get(step) or appended[step], appended=False))
        return results

    def add_checkpoint(self, checkpoint: CheckpointRow) -> CheckpointRow:
        """Store a signed checkpoint; if one already exists at that position, return that one."""
        try:
            with Session(self._writer) as session, session.begin():
                session.add(LedgerCheckpoint(**checkpoint.__dict__))
            return checkpoint
        except IntegrityError:
            with Session(self._engine) as session:
                existing = session.get(LedgerCheckpoint, checkpoint.position)
                if existing is None:
                    raise
                return _checkpoint_row(existing)

    def _lock(self, connection: Connection) -> None:
        if self.backend == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LEDGER_LOCK_KEY})

    # ---- reading -------------------------------------------------------------------------------

    def incident_events(self, incident_id: str) -> list[LedgerRow]:
        with self._engine.connect() as connection:
            return [_row(r) for r in connection.execute(_INCIDENT_EVENTS, {"incident_id": incident_id})]

    def incidents(self) -> list[IncidentHead]:
        """The head of every incident, oldest activity first."""
        last = (
            select(LedgerEvent.incident_id, func.max(LedgerEvent.sequence).label("sequence"))
            .group_by(col(LedgerEvent.incident_id))
            .subquery()
        )
        with Session(self._engine) as session:
            found = session.exec(
                select(LedgerEvent)
                .join(
                    last, and_(LedgerEvent.incident_id == last.c.incident_id, LedgerEvent.sequence == last.c.sequence)
                )
                .order_by(col(LedgerEvent.position))
            )
            return [
                IncidentHead(
                    e.incident_id, e.sequence, _position(e), e.event_id, e.event_type, e.hash, _utc(e.appended_at)
                )
                for e in found
            ]

    def events_after(self, position: int = 0, limit: int = 1000) -> list[LedgerRow]:
        with self._engine.connect() as connection:
            return [_row(r) for r in connection.execute(_EVENTS_AFTER, {"position": position, "limit": limit})]

    def range_entries(self, position: int, upto: int, limit: int = 5000) -> list[tuple[int, str, int, str]]:
        """(position, incident_id, sequence, hash) of the events in (position, upto], in order: what a
        checkpoint lists, so that a later gap or move can be named by its incident."""
        with Session(self._engine) as session:
            found = session.exec(
                select(LedgerEvent.position, LedgerEvent.incident_id, LedgerEvent.sequence, LedgerEvent.hash)
                .where(col(LedgerEvent.position) > position, col(LedgerEvent.position) <= upto)
                .order_by(col(LedgerEvent.position))
                .limit(limit)
            )
            return [(int(p or 0), i, int(s), h) for p, i, s, h in found]

    def oldest_appended_after(self, position: int) -> datetime | None:
        """When the oldest event after `position` was appended; None when there is none."""
        with Session(self._engine) as session:
            found = session.exec(
                select(LedgerEvent.appended_at)
                .where(col(LedgerEvent.position) > position)
                .order_by(col(LedgerEvent.position))
                .limit(1)
            ).first()
            return _utc(found) if found is not None else None

    def event(self, event_id: str) -> LedgerRow | None:
        return self._one_row(_EVENTS.c.event_id == event_id)

    def event_with_digest(self, envelope_digest: str) -> LedgerRow | None:
        """The event whose envelope has this sha256: how an input digest is followed back to its event."""
        return self._one_row(_EVENTS.c.envelope_digest == envelope_digest)

    def _one_row(self, where: Any) -> LedgerRow | None:
        with self._engine.connect() as connection:
            found = connection.execute(select(*_ROW_COLUMNS).where(where).limit(1)).first()
            return _row(found) if found is not None else None

    def count(self) -> int:
        with Session(self._engine) as session:
            return int(session.exec(select(func.count()).select_from(LedgerEvent)).one())

    def head_position(self) -> int:
        """The position of the newest event, 0 for an empty ledger."""
        with Session(self._engine) as session:
            return int(session.exec(select(func.coalesce(func.max(LedgerEvent.position), 0))).one())

    def checkpoints(self) -> list[CheckpointRow]:
        with Session(self._engine) as session:
            found = session.exec(select(LedgerCheckpoint).order_by(col(LedgerCheckpoint.position)))
            return [_checkpoint_row(c) for c in found]

    def latest_checkpoint(self) -> CheckpointRow | None:
        with Session(self._engine) as session:
            found = session.exec(
                select(LedgerCheckpoint).order_by(col(LedgerCheckpoint.position).desc()).limit(1)
            ).first()
            return _checkpoint_row(found) if found is not None else None


def _utc(moment: datetime) -> datetime:
    """SQLite hands timestamps back without their zone; they were written in UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _position(e: LedgerEvent) -> int:
    if e.position is None:
        raise RuntimeError("ledger row has no position; it was not flushed")
    return e.position


def _row(r: Any) -> LedgerRow:
    """A row of `_ROW_COLUMNS`, read without the ORM (no identity map, no instance per row)."""
    return LedgerRow(
        position=int(r.position),
        incident_id=r.incident_id,
        sequence=r.sequence,
        event_id=r.event_id,
        event_type=r.event_type,
        event_version=r.event_version,
        producer=r.producer,
        signer_keyid=r.signer_keyid,
        causation_id=r.causation_id,
        envelope=r.envelope,
        envelope_digest=r.envelope_digest,
        prev_hash=r.prev_hash,
        hash=r.hash,
        appended_at=_utc(r.appended_at),
    )


def _checkpoint_row(c: LedgerCheckpoint) -> CheckpointRow:
    return CheckpointRow(c.position, c.event_count, c.head_hash, c.signer_keyid, c.envelope, _utc(c.created_at))
