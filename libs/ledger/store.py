"""The event store: append-only, hash-chained per incident, and the only place that speaks SQL.

Appends are serialised: in PostgreSQL by one transaction-scoped advisory lock, in SQLite by BEGIN
IMMEDIATE. Serialising per incident would be enough to keep each chain unforked, but serialising all
appends also makes `position` commit in order, so a reader following `events_after(position)` never
skips a row committed late with a lower position, and a checkpoint at position P is a stable cut.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, and_, bindparam, func, insert, text
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from libs.canonical_json import sha256_hex
from libs.events.codec import SignedEvent
from libs.ledger.engine import ledger_engine, writer
from libs.ledger.rows import AppendResult, CheckpointRow, IncidentHead, LedgerRow
from libs.ledger.schema import LEDGER_LOCK_KEY, create_schema
from libs.ledger.tables import GENESIS_HASH, LedgerCheckpoint, LedgerEvent

# Built once: the append path runs these three statements and nothing else.
_FIND_EVENT = select(
    LedgerEvent.position, LedgerEvent.sequence, LedgerEvent.hash, LedgerEvent.event_id, LedgerEvent.envelope_digest
).where(LedgerEvent.event_id == bindparam("event_id"))
_INCIDENT_HEAD = (
    select(LedgerEvent.sequence, LedgerEvent.hash)
    .where(LedgerEvent.incident_id == bindparam("incident_id"))
    .order_by(col(LedgerEvent.sequence).desc())
    .limit(1)
)
_INSERT_EVENT = insert(LedgerEvent).returning(LedgerEvent.position)


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
        try:
            return self._append_once(signed)
        except IntegrityError:
            # Only a writer that bypassed the lock can get here; the row it wrote is now visible.
            return self._append_once(signed)

    def _append_once(self, signed: SignedEvent) -> AppendResult:
        meta = signed.event.meta
        with self._writer.begin() as connection:
            self._lock(connection)
            existing = connection.execute(_FIND_EVENT, {"event_id": meta.event_id}).first()
            if existing is not None:
                return AppendResult(False, *existing)
            head = connection.execute(_INCIDENT_HEAD, {"incident_id": meta.incident_id}).first()
            sequence, prev_hash = (head[0] + 1, head[1]) if head else (1, GENESIS_HASH)
            event_hash = chain_hash(prev_hash, signed.envelope_bytes)
            row = {
                "incident_id": meta.incident_id,
                "sequence": sequence,
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
                "appended_at": datetime.now(UTC),
            }
            position = connection.execute(_INSERT_EVENT, row).scalar_one()
            return AppendResult(True, int(position), sequence, event_hash, meta.event_id, signed.digest)

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
        with Session(self._engine) as session:
            found = session.exec(
                select(LedgerEvent).where(LedgerEvent.incident_id == incident_id).order_by(col(LedgerEvent.sequence))
            )
            return [_ledger_row(e) for e in found]

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
        with Session(self._engine) as session:
            found = session.exec(
                select(LedgerEvent)
                .where(col(LedgerEvent.position) > position)
                .order_by(col(LedgerEvent.position))
                .limit(limit)
            )
            return [_ledger_row(e) for e in found]

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
        with Session(self._engine) as session:
            found = session.exec(select(LedgerEvent).where(LedgerEvent.event_id == event_id)).first()
            return _ledger_row(found) if found is not None else None

    def event_with_digest(self, envelope_digest: str) -> LedgerRow | None:
        """The event whose envelope has this sha256: how an input digest is followed back to its event."""
        with Session(self._engine) as session:
            found = session.exec(select(LedgerEvent).where(LedgerEvent.envelope_digest == envelope_digest)).first()
            return _ledger_row(found) if found is not None else None

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


def _ledger_row(e: LedgerEvent) -> LedgerRow:
    return LedgerRow(
        position=_position(e),
        incident_id=e.incident_id,
        sequence=e.sequence,
        event_id=e.event_id,
        event_type=e.event_type,
        event_version=e.event_version,
        producer=e.producer,
        signer_keyid=e.signer_keyid,
        causation_id=e.causation_id,
        envelope=e.envelope,
        envelope_digest=e.envelope_digest,
        prev_hash=e.prev_hash,
        hash=e.hash,
        appended_at=_utc(e.appended_at),
    )


def _checkpoint_row(c: LedgerCheckpoint) -> CheckpointRow:
    return CheckpointRow(c.position, c.event_count, c.head_hash, c.signer_keyid, c.envelope, _utc(c.created_at))
