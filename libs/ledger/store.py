"""The event store: append-only, hash-chained per incident, and (with its writers) the only place that speaks SQL.

Appends go through the backend's writer (`sqlite_writer`, `core_writer`; the algorithm is `appender`'s) and are
serialised: in PostgreSQL by one transaction-scoped advisory lock, in SQLite by BEGIN IMMEDIATE. Serialising per
incident would be enough to keep each chain unforked, but serialising all appends also makes `position` commit in
order, so a reader following `events_after(position)` never skips a row committed late with a lower position, and a
checkpoint at position P is a stable cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from libs.events.codec import SignedEvent
from libs.ledger.appender import Appender, WriterBackend
from libs.ledger.core_writer import CoreWriter
from libs.ledger.engine import ledger_engine, writer
from libs.ledger.row_source import CoreRowSource, RowSource, SqliteRowSource
from libs.ledger.rows import AppendResult, CheckpointRow, IncidentHead, LedgerRow
from libs.ledger.schema import create_schema
from libs.ledger.sqlite_writer import SqliteWriter
from libs.ledger.tables import LedgerCheckpoint, LedgerEvent

__all__ = ["LedgerStore"]

_EVENTS = LedgerEvent.__table__  # type: ignore[attr-defined]
_ROW = (
    "SELECT position, incident_id, sequence, event_id, event_type, event_version, producer, signer_keyid, "
    "causation_id, envelope, envelope_digest, prev_hash, hash, appended_at FROM ledger_events"
)
# The incident's rows in chain order: a walk of the unique (incident_id, sequence) index, no sort and no scan.
_INCIDENT_EVENTS = _ROW + " WHERE incident_id = :incident_id ORDER BY sequence"
_EVENTS_AFTER = _ROW + " WHERE position > :position ORDER BY position LIMIT :limit"
_EVENT = _ROW + " WHERE incident_id = :incident_id AND event_id = :event_id LIMIT 1"
_EVENT_WITH_DIGEST = _ROW + " WHERE incident_id = :incident_id AND envelope_digest = :digest LIMIT 1"
_ANY_EVENT = _ROW + " WHERE event_id = :event_id LIMIT 1"
_ANY_EVENT_WITH_DIGEST = _ROW + " WHERE envelope_digest = :digest LIMIT 1"
_STORED = "SELECT incident_id, event_id FROM ledger_events WHERE incident_id = :incident_id AND event_id = :event_id"
_RANGE_ENTRIES = (
    "SELECT position, incident_id, sequence, hash FROM ledger_events WHERE position > :position AND position <= :upto "
    "ORDER BY position LIMIT :limit"
)
_HEADS = (
    "SELECT e.incident_id, e.sequence, e.position, e.event_id, e.event_type, e.hash, e.appended_at "
    "FROM ledger_events e JOIN (SELECT incident_id, max(sequence) AS sequence FROM ledger_events GROUP BY incident_id) "
    "last ON e.incident_id = last.incident_id AND e.sequence = last.sequence ORDER BY e.position"
)
_OLDEST_AFTER = "SELECT appended_at FROM ledger_events WHERE position > :position ORDER BY position LIMIT 1"
_IN_CHUNK = 500


def _in(column: str, values: Sequence[str]) -> tuple[str, dict[str, object]]:
    """`column IN (:v0, :v1, …)` and its parameters: named, so one text serves SQLite and PostgreSQL."""
    names = [f"v{i}" for i in range(len(values))]
    return f"{column} IN ({', '.join(':' + n for n in names)})", dict(zip(names, values, strict=True))


class LedgerStore:
    """`LedgerStore("sqlite:///data/ledger.db")` or `LedgerStore("postgresql+psycopg://user@host/db")`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine = ledger_engine(url)
        self._writer = writer(self._engine)
        database = self._engine.url.database
        backend: WriterBackend = (
            SqliteWriter(database) if self.backend == "sqlite" and database else CoreWriter(self._writer)
        )
        self._appender = Appender(backend)
        self._rows: RowSource = (
            SqliteRowSource(database) if self.backend == "sqlite" and database else CoreRowSource(self._engine)
        )

    @property
    def backend(self) -> str:
        return self._engine.dialect.name

    def create_schema(self) -> None:
        with self._writer.begin() as connection:
            create_schema(connection)

    def close(self) -> None:
        self._appender.close()
        self._rows.close()
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
        return self._appender.append_batch(events)

    def durability(self) -> tuple[str, str]:
        """(journal, synchronous) of the writer: ("wal", "full") for SQLite, ("wal", synchronous_commit) for
        PostgreSQL."""
        return self._appender.backend.durability()

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

    # ---- reading -------------------------------------------------------------------------------

    def incident_events(self, incident_id: str) -> list[LedgerRow]:
        return [_row(r) for r in self._rows.fetch(_INCIDENT_EVENTS, {"incident_id": incident_id})]

    def incidents_events(self, incident_ids: Sequence[str]) -> dict[str, list[LedgerRow]]:
        """Several incidents' rows, each in chain order, read in a few statements (what `verify_all` reads)."""
        found: dict[str, list[LedgerRow]] = {i: [] for i in incident_ids}
        for start in range(0, len(incident_ids), _IN_CHUNK):
            where, params = _in("incident_id", incident_ids[start : start + _IN_CHUNK])
            for r in self._rows.fetch(f"{_ROW} WHERE {where} ORDER BY incident_id, sequence", params):
                found[r[1]].append(_row(r))
        return found

    def stored_event_ids(self, events: Sequence[tuple[str, str]]) -> set[str]:
        """Which of these (incident id, event id) the ledger holds: their event ids."""
        found: set[str] = set()
        for incident_id, event_id in events:
            if self._rows.fetch(_STORED, {"incident_id": incident_id, "event_id": event_id}):
                found.add(event_id)
        return found

    def incidents(self) -> list[IncidentHead]:
        """The head of every incident, oldest activity first."""
        return [
            IncidentHead(incident, int(sequence), int(position), event_id, event_type, event_hash, _moment(at))
            for incident, sequence, position, event_id, event_type, event_hash, at in self._rows.fetch(_HEADS, {})
        ]

    def events_after(self, position: int = 0, limit: int = 1000) -> list[LedgerRow]:
        return [_row(r) for r in self._rows.fetch(_EVENTS_AFTER, {"position": position, "limit": limit})]

    def range_entries(self, position: int, upto: int, limit: int = 5000) -> list[tuple[int, str, int, str]]:
        """(position, incident_id, sequence, hash) of the events in (position, upto], in order: what a
        checkpoint lists, so that a later gap or move can be named by its incident."""
        found = self._rows.fetch(_RANGE_ENTRIES, {"position": position, "upto": upto, "limit": limit})
        return [(int(p), str(i), int(s), str(h)) for p, i, s, h in found]

    def oldest_appended_after(self, position: int) -> datetime | None:
        """When the oldest event after `position` was appended; None when there is none."""
        found = self._rows.fetch(_OLDEST_AFTER, {"position": position})
        return _moment(found[0][0]) if found else None

    def event(self, event_id: str, incident_id: str | None = None) -> LedgerRow | None:
        """An event by its id. Give its incident: the incident's own index finds it; without it a ledger of the
        current layout reads every row (one created before has an index on the id alone)."""
        if incident_id is None:
            found = self._rows.fetch(_ANY_EVENT, {"event_id": event_id})
        else:
            found = self._rows.fetch(_EVENT, {"incident_id": incident_id, "event_id": event_id})
        return _row(found[0]) if found else None

    def event_with_digest(self, envelope_digest: str, incident_id: str | None = None) -> LedgerRow | None:
        """The event whose envelope has this sha256: how an input digest is followed back to its event. Give its
        incident, as for `event`."""
        if incident_id is None:
            found = self._rows.fetch(_ANY_EVENT_WITH_DIGEST, {"digest": envelope_digest})
        else:
            found = self._rows.fetch(_EVENT_WITH_DIGEST, {"incident_id": incident_id, "digest": envelope_digest})
        return _row(found[0]) if found else None

    def count(self) -> int:
        return int(self._rows.fetch("SELECT count(*) FROM ledger_events", {})[0][0])

    def head_position(self) -> int:
        """The position of the newest event, 0 for an empty ledger."""
        return int(self._rows.fetch("SELECT coalesce(max(position), 0) FROM ledger_events", {})[0][0])

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


def _row(r: tuple[Any, ...]) -> LedgerRow:
    """A row of `_ROW`, read without the ORM (no identity map, no instance per row)."""
    position, incident, sequence, event_id, event_type, version, producer, keyid, cause, envelope, digest = r[:11]
    return LedgerRow(
        int(position),
        incident,
        int(sequence),
        event_id,
        event_type,
        version,
        producer,
        keyid,
        cause,
        envelope,
        digest,
        r[11],
        r[12],
        _moment(r[13]),
    )


def _moment(stored: datetime | str) -> datetime:
    """`appended_at` as read: a datetime from PostgreSQL, SQLAlchemy's text form from SQLite; in UTC."""
    return _utc(datetime.fromisoformat(stored) if isinstance(stored, str) else stored)


def _checkpoint_row(c: LedgerCheckpoint) -> CheckpointRow:
    return CheckpointRow(c.position, c.event_count, c.head_hash, c.signer_keyid, c.envelope, _utc(c.created_at))
