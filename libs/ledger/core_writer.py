"""The PostgreSQL ledger's writer: SQLAlchemy Core statements built once, a transaction-scoped advisory lock as the
writers' lock, one multi-row INSERT … RETURNING per batch (positions come from a sequence, so they are read back).

Durability is the server's: with `synchronous_commit=on` (PostgreSQL's default; keep it for the ledger) a commit
returns once its WAL record is flushed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, and_, bindparam, func, insert, select, text

from libs.ledger.append_plan import APPEND_COLUMNS, Head, Row
from libs.ledger.rows import AppendResult
from libs.ledger.schema import LEDGER_LOCK_KEY
from libs.ledger.tables import LedgerEvent

_EVENTS = LedgerEvent.__table__  # type: ignore[attr-defined]
_NEWEST = select(func.coalesce(func.max(_EVENTS.c.position), 0))
_FIND_EVENTS = select(
    _EVENTS.c.incident_id,
    _EVENTS.c.event_id,
    _EVENTS.c.position,
    _EVENTS.c.sequence,
    _EVENTS.c.hash,
    _EVENTS.c.envelope_digest,
).where(
    _EVENTS.c.incident_id.in_(bindparam("incident_ids", expanding=True)),
    _EVENTS.c.event_id.in_(bindparam("event_ids", expanding=True)),
)
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
_LOCK = text("SELECT pg_advisory_xact_lock(:key)")


class _Transaction:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def newest_position(self) -> int:
        return int(self.connection.execute(_NEWEST).scalar_one())

    def stored(self, events: Sequence[tuple[str, str]]) -> dict[str, AppendResult]:
        asked = set(events)
        found = self.connection.execute(
            _FIND_EVENTS, {"incident_ids": sorted({i for i, _ in asked}), "event_ids": sorted({e for _, e in asked})}
        )
        return {
            r.event_id: AppendResult(False, int(r.position), int(r.sequence), r.hash, r.event_id, r.envelope_digest)
            for r in found
            if (r.incident_id, r.event_id) in asked
        }

    def heads(self, incident_ids: Sequence[str]) -> dict[str, Head]:
        found = self.connection.execute(_INCIDENT_HEADS, {"incident_ids": list(incident_ids)})
        return {r.incident_id: (int(r.sequence), r.hash) for r in found}

    def insert(self, rows: Sequence[Row], after: int) -> list[int]:
        """Positions come from a sequence (a failed transaction leaves a gap): read back, not counted from `after`."""
        parameters = [dict(zip(APPEND_COLUMNS, row, strict=True)) for row in rows]
        return [int(p) for p in self.connection.execute(_INSERT_EVENTS, parameters).scalars()]


class CoreWriter:
    def __init__(self, writer: Engine) -> None:
        self.writer = writer

    @contextmanager
    def begin(self) -> Iterator[_Transaction]:
        with self.writer.begin() as connection:
            connection.execute(_LOCK, {"key": LEDGER_LOCK_KEY})
            yield _Transaction(connection)

    def timestamp(self) -> object:
        return datetime.now(UTC)

    def durability(self) -> tuple[str, str]:
        with self.writer.connect() as connection:
            return "wal", str(connection.execute(text("SHOW synchronous_commit")).scalar_one())

    def close(self) -> None:
        """The store disposes of the engine."""
