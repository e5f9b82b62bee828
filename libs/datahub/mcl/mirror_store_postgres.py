"""The metadata mirror on PostgreSQL, shared by the replicas of the context service (``MODELGUARD_STATE_URL``).

The tables are those of the SQLite store, prefixed ``context_mirror_``, plus a feed: every write appends the keys
it changed that other replicas index in memory (indexed and timeseries aspects, deleted entities), and each
replica re-reads what the others wrote before it handles its next batch (:meth:`MetadataMirror.follow_feed`).

Writes are serialised by a transaction-scoped advisory lock taken first in each write transaction, so feed
sequence numbers commit in order: a replica that has read up to ``seq`` has missed nothing below it. The feed is
pruned to its newest :data:`FEED_KEEP` entries; a replica further behind than that (the store remembers how far
it pruned) reloads the whole mirror. Offsets are per (topic, partition): replicas in one consumer group own
disjoint partitions, each commits its own partitions' offsets with its state.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import psycopg
from sqlalchemy.engine import make_url

from libs.datahub.mcl.mirror_store import (
    DEFAULT_MAX_CHANGES,
    ChangeRow,
    FeedEntry,
    FeedPage,
    MirrorWrite,
    StoredAspect,
    TopicPartition,
)

FEED_KEEP = 200_000
PRUNE_EVERY_WRITES = 200
_LOCK_KEY = "modelguard.context_mirror"
_PRUNED_THROUGH = "feed_pruned_through"
_READ_CHUNK = 5_000
_CHANGE_COLUMNS = "entity_urn, entity_type, aspect, change_type, time_ms, actor, previous, current, change_key"

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS context_mirror_aspects (
        urn TEXT NOT NULL, aspect TEXT NOT NULL, entity_type TEXT NOT NULL, json TEXT NOT NULL, facts TEXT,
        PRIMARY KEY (urn, aspect))""",
    """CREATE TABLE IF NOT EXISTS context_mirror_offsets (
        topic TEXT NOT NULL, partition INTEGER NOT NULL, next_offset BIGINT NOT NULL,
        PRIMARY KEY (topic, partition))""",
    "CREATE TABLE IF NOT EXISTS context_mirror_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS context_mirror_counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS context_mirror_changes (
        position BIGSERIAL PRIMARY KEY, entity_urn TEXT NOT NULL, entity_type TEXT NOT NULL, aspect TEXT NOT NULL,
        change_type TEXT NOT NULL, time_ms BIGINT, actor TEXT, previous TEXT, current TEXT, change_key TEXT NOT NULL,
        UNIQUE (entity_urn, aspect, change_key))""",
    """CREATE TABLE IF NOT EXISTS context_mirror_seen_risks (
        fingerprint TEXT PRIMARY KEY, remembered_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS context_mirror_feed (
        seq BIGSERIAL PRIMARY KEY, writer TEXT NOT NULL, urn TEXT NOT NULL, aspect TEXT)""",
)


def libpq_conninfo(url: str) -> str:
    """A SQLAlchemy-style URL (``postgresql+psycopg://…``) as a URI libpq reads (``postgresql://…``)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class PostgresMirrorStore:
    shared = True

    def __init__(self, url: str, *, writer: str | None = None, max_changes: int = DEFAULT_MAX_CHANGES) -> None:
        self._db = psycopg.connect(libpq_conninfo(url), autocommit=True)
        self._lock = threading.RLock()
        self._max_changes = max_changes
        self.writer = writer or uuid.uuid4().hex
        """Who this store writes as in the feed (its own entries are not read back)."""
        self._writes = 0
        with self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_LOCK_KEY,))  # replicas start together
            for statement in _SCHEMA:
                self._db.execute(statement)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- reads -----------------------------------------------------------------------------------------

    def aspect_json(self, urn: str, aspect_name: str) -> str | None:
        row = self._one("SELECT json FROM context_mirror_aspects WHERE urn = %s AND aspect = %s", (urn, aspect_name))
        return None if row is None else str(row[0])

    def stored_aspect(self, urn: str, aspect_name: str) -> StoredAspect | None:
        row = self._one(
            "SELECT entity_type, json, facts FROM context_mirror_aspects WHERE urn = %s AND aspect = %s",
            (urn, aspect_name),
        )
        return None if row is None else StoredAspect(urn, aspect_name, row[0], row[1], row[2])

    def all_aspects(self, aspect_names: Iterable[str] | None = None) -> Iterator[StoredAspect]:
        query = "SELECT urn, aspect, entity_type, json, facts FROM context_mirror_aspects"
        parameters: tuple[object, ...] = ()
        if aspect_names is not None:
            query += " WHERE aspect = ANY(%s)"
            parameters = (sorted(set(aspect_names)),)
        with self._lock, self._db.cursor(name=f"all_aspects_{uuid.uuid4().hex}") as cursor, self._db.transaction():
            cursor.execute(query + " ORDER BY urn, aspect", parameters)
            while rows := cursor.fetchmany(_READ_CHUNK):
                for urn, aspect_name, entity_type, text, facts in rows:
                    yield StoredAspect(urn, aspect_name, entity_type, text, facts)

    def aspect_count(self) -> int:
        row = self._one("SELECT COUNT(*) FROM context_mirror_aspects")
        return int(row[0]) if row else 0

    def offsets(self) -> dict[TopicPartition, int]:
        with self._lock:
            rows = self._db.execute("SELECT topic, partition, next_offset FROM context_mirror_offsets").fetchall()
        return {(topic, partition): int(offset) for topic, partition, offset in rows}

    def meta(self, key: str) -> str | None:
        row = self._one("SELECT value FROM context_mirror_meta WHERE key = %s", (key,))
        return None if row is None else str(row[0])

    def counters(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT name, value FROM context_mirror_counters").fetchall()
        return {str(name): int(value) for name, value in rows}

    def recent_changes(self) -> list[ChangeRow]:
        with self._lock:
            query = f"SELECT {_CHANGE_COLUMNS} FROM context_mirror_changes ORDER BY position"
            rows = self._db.execute(query).fetchall()
        return [ChangeRow(*row) for row in rows]

    def seen(self, fingerprint: str) -> bool:
        return self._one("SELECT 1 FROM context_mirror_seen_risks WHERE fingerprint = %s", (fingerprint,)) is not None

    def feed_position(self) -> int:
        row = self._one("SELECT COALESCE(MAX(seq), 0) FROM context_mirror_feed")
        return int(row[0]) if row else 0

    def changed_since(self, seq: int) -> FeedPage | None:
        with self._lock, self._db.transaction():
            pruned = self._db.execute(
                "SELECT value FROM context_mirror_meta WHERE key = %s", (_PRUNED_THROUGH,)
            ).fetchone()
            if pruned is not None and int(pruned[0]) > seq:
                return None
            rows = self._db.execute(
                "SELECT seq, writer, urn, aspect FROM context_mirror_feed WHERE seq > %s ORDER BY seq", (seq,)
            ).fetchall()
        entries = [FeedEntry(int(s), urn, aspect) for s, writer, urn, aspect in rows if writer != self.writer]
        return FeedPage(int(rows[-1][0]) if rows else seq, entries)

    def _one(self, query: str, parameters: tuple[object, ...] = ()) -> tuple[Any, ...] | None:
        with self._lock:
            row = self._db.execute(query, parameters).fetchone()
        return None if row is None else tuple(row)

    # --- writes ----------------------------------------------------------------------------------------

    def write(self, batch: MirrorWrite) -> None:
        with self._lock, self._db.transaction(), self._db.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_LOCK_KEY,))
            self._write(cursor, batch)
            self._writes += 1
            if self._writes % PRUNE_EVERY_WRITES == 0:
                self._prune(cursor)

    def _write(self, cursor: psycopg.Cursor[tuple[object, ...]], batch: MirrorWrite) -> None:
        if batch.deleted_entities:
            cursor.executemany(
                "DELETE FROM context_mirror_aspects WHERE urn = %s", [(urn,) for urn in batch.deleted_entities]
            )
        if batch.deletes:
            cursor.executemany("DELETE FROM context_mirror_aspects WHERE urn = %s AND aspect = %s", batch.deletes)
        if batch.upserts:
            cursor.executemany(
                "INSERT INTO context_mirror_aspects (urn, aspect, entity_type, json, facts) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (urn, aspect) DO UPDATE SET "
                "entity_type = excluded.entity_type, json = excluded.json, facts = excluded.facts",
                [(row.urn, row.aspect_name, row.entity_type, row.json, row.facts) for row in batch.upserts],
            )
        if batch.offsets:
            cursor.executemany(
                "INSERT INTO context_mirror_offsets (topic, partition, next_offset) VALUES (%s, %s, %s) "
                "ON CONFLICT (topic, partition) DO UPDATE SET next_offset = excluded.next_offset",
                [(topic, partition, offset) for (topic, partition), offset in batch.offsets.items()],
            )
        if batch.meta:
            cursor.executemany(
                "INSERT INTO context_mirror_meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                list(batch.meta.items()),
            )
        if batch.changes:
            cursor.executemany(
                f"INSERT INTO context_mirror_changes ({_CHANGE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (entity_urn, aspect, change_key) DO NOTHING",
                [change.values() for change in batch.changes],
            )
            cursor.execute(
                "DELETE FROM context_mirror_changes WHERE position <= "
                "(SELECT MAX(position) FROM context_mirror_changes) - %s",
                (self._max_changes,),
            )
        if batch.counter_increments:
            cursor.executemany(
                "INSERT INTO context_mirror_counters (name, value) VALUES (%s, %s) "
                "ON CONFLICT (name) DO UPDATE SET value = context_mirror_counters.value + excluded.value",
                list(batch.counter_increments.items()),
            )
        if batch.seen_fingerprints:
            cursor.executemany(
                "INSERT INTO context_mirror_seen_risks (fingerprint, remembered_at) VALUES (%s, %s) "
                "ON CONFLICT (fingerprint) DO NOTHING",
                list(batch.seen_fingerprints),
            )
        if batch.feed:
            cursor.executemany(
                "INSERT INTO context_mirror_feed (writer, urn, aspect) VALUES (%s, %s, %s)",
                [(self.writer, urn, aspect) for urn, aspect in batch.feed],
            )

    def _prune(self, cursor: psycopg.Cursor[tuple[object, ...]]) -> None:
        cursor.execute("SELECT COALESCE(MAX(seq), 0) - %s FROM context_mirror_feed", (FEED_KEEP,))
        row = cursor.fetchone()
        through = int(str(row[0])) if row else 0
        if through <= 0:
            return
        cursor.execute("DELETE FROM context_mirror_feed WHERE seq <= %s", (through,))
        cursor.execute(
            "INSERT INTO context_mirror_meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (_PRUNED_THROUGH, str(through)),
        )
