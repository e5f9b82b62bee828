"""The dead letters, kept in the ledger's database beside (never inside) the signed events, for the console.

The ledger service reads the dead-letter topic with its own consumer group and keeps one row per dead letter
(``services/ledger/dead_letter_keeping.py``); the console reads them from the database it already reads, so a
console in its own pod needs no Kafka credentials, and a dead letter outlives the topic's retention and the
embedded broker of a demo. A row is unsigned operational data: no hash chain, no checkpoint and no verification
reads this table, and nothing in it is trusted.

What a row keeps of the refused bytes is their sha256 and their size, never the bytes: they were refused because
they were malformed or hostile, and whoever needs them reads the topic at the row's position. The headers the
refusing service wrote (service, reason, source, detail) and the record's key are kept as text, cut to a length
and stripped of control characters (PostgreSQL refuses NUL in text; a terminal or a page should not get the
others). A record read twice (a redelivery) is kept once: its id digests its position and its content, so the
same offset of a new topic (a broker that started afresh) is a new row.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import BigInteger, Column, DateTime, Index, MetaData, String, Table, Text, func, inspect, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from libs.bus.dead_letters import DeadLetter
from libs.ledger.engine import ledger_engine, writer

TABLE = "operations_dead_letters"
KEEP_CHARS = {"service": 64, "reason": 128, "source": 300, "key": 256, "detail": 2000, "position": 300}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

_METADATA = MetaData()
DEAD_LETTERS = Table(
    TABLE,
    _METADATA,
    Column("id", String(64), primary_key=True),
    Column("position", String(KEEP_CHARS["position"]), nullable=False),
    Column("dead_lettered_at", DateTime(timezone=True), nullable=False),
    Column("kept_at", DateTime(timezone=True), nullable=False),
    Column("service", String(KEEP_CHARS["service"]), nullable=False),
    Column("reason", String(KEEP_CHARS["reason"]), nullable=False),
    Column("source", String(KEEP_CHARS["source"]), nullable=False),
    Column("record_key", String(KEEP_CHARS["key"])),
    Column("detail", Text, nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("sha256", String(64), nullable=False),
    Index("operations_dead_letters_when", "dead_lettered_at"),
)


@dataclass(frozen=True)
class KeptDeadLetter:
    position: str
    """Where the dead letter is on the dead-letter topic: ``topic/partition@offset``."""
    dead_lettered_at: datetime
    service: str
    reason: str
    source: str
    """The refused input's place: ``topic/partition@offset``."""
    key: str | None
    """The refused record's key (a ModelGuard event's is its incident id); unverified."""
    detail: str
    size: int
    sha256: str
    """Of the dead-lettered bytes (an ``oversize`` input's are its first bytes; its detail names the whole's)."""


@dataclass(frozen=True)
class DeadLetterGroup:
    service: str
    reason: str
    count: int
    latest: datetime


def keepable(text: str | None, limit: int) -> str:
    """Text as a row keeps it: control characters (NUL first) replaced, cut to ``limit`` characters."""
    cleaned = _CONTROL.sub("\ufffd", text or "")
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


class DeadLetterStore:
    """``DeadLetterStore(settings.ledger_url)``: the same SQLite file or PostgreSQL database as the ledger."""

    def __init__(self, url: str) -> None:
        self._engine: Engine = ledger_engine(url)
        self._writer = writer(self._engine)

    def create_schema(self) -> None:
        with self._writer.begin() as connection:
            _METADATA.create_all(connection)

    def close(self) -> None:
        self._engine.dispose()

    def exists(self) -> bool:
        """Whether a ledger service of this version has made the table (a reader never makes it)."""
        with self._engine.connect() as connection:
            return inspect(connection).has_table(TABLE)

    def keep(self, position: str, letter: DeadLetter, dead_lettered_at: datetime | None = None) -> bool:
        """Keep one record of the dead-letter topic; False when it was kept before (a redelivery)."""
        digest = hashlib.sha256(letter.value).hexdigest()
        kept_position = keepable(position, KEEP_CHARS["position"])
        service = keepable(letter.service, KEEP_CHARS["service"])
        reason = keepable(letter.reason, KEEP_CHARS["reason"])
        source = keepable(letter.source, KEEP_CHARS["source"])
        detail = keepable(letter.detail, KEEP_CHARS["detail"])
        identity = "\n".join([kept_position, digest, service, reason, source, detail])
        row = {
            "id": hashlib.sha256(identity.encode()).hexdigest(),
            "position": kept_position,
            "dead_lettered_at": _utc(dead_lettered_at) if dead_lettered_at else datetime.now(UTC),
            "kept_at": datetime.now(UTC),
            "service": service,
            "reason": reason,
            "source": source,
            "record_key": keepable(letter.key, KEEP_CHARS["key"]) if letter.key is not None else None,
            "detail": detail,
            "size": len(letter.value),
            "sha256": digest,
        }
        dialect = postgresql if self._engine.dialect.name == "postgresql" else sqlite
        statement = (
            dialect.insert(DEAD_LETTERS)
            .values(**row)
            .on_conflict_do_nothing(index_elements=["id"])
            .returning(DEAD_LETTERS.c.id)  # a row back when it was kept (psycopg's rowcount does not say)
        )
        with self._writer.begin() as connection:
            return connection.execute(statement).first() is not None

    def count(self) -> int:
        with self._engine.connect() as connection:
            return int(connection.execute(select(func.count()).select_from(DEAD_LETTERS)).scalar_one())

    def groups(self) -> list[DeadLetterGroup]:
        """How many per service and reason, the most first."""
        c = DEAD_LETTERS.c
        count = func.count().label("letters")
        query = (
            select(c.service, c.reason, count, func.max(c.dead_lettered_at).label("latest"))
            .group_by(c.service, c.reason)
            .order_by(count.desc(), c.service, c.reason)
        )
        with self._engine.connect() as connection:
            return [
                DeadLetterGroup(r.service, r.reason, int(r.letters), _utc(r.latest)) for r in connection.execute(query)
            ]

    def newest(self, limit: int = 100, service: str | None = None, reason: str | None = None) -> list[KeptDeadLetter]:
        c = DEAD_LETTERS.c
        query = select(DEAD_LETTERS).order_by(c.dead_lettered_at.desc(), c.position.desc()).limit(limit)
        if service is not None:
            query = query.where(c.service == service)
        if reason is not None:
            query = query.where(c.reason == reason)
        with self._engine.connect() as connection:
            return [
                KeptDeadLetter(
                    r.position,
                    _utc(r.dead_lettered_at),
                    r.service,
                    r.reason,
                    r.source,
                    r.record_key,
                    r.detail,
                    int(r.size),
                    r.sha256,
                )
                for r in connection.execute(query)
            ]


def _utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every one stored here is UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
