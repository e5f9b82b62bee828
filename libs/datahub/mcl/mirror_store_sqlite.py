"""The metadata mirror in one SQLite file (``mirror.sqlite``): the default store, for one process.

WAL with ``synchronous=NORMAL``: a committed batch survives a crash of the process (the WAL is written before
COMMIT returns); a power loss may lose the last batches, which then come again from Kafka, since their offsets
were lost with them. The WAL is checkpointed every 20,000 pages (80 MB) instead of SQLite's 1,000: a checkpoint
syncs the database file, and at 1,000 pages one came every few batches of the MCL intake (half its commit time);
it changes nothing of what a commit guarantees. The page cache holds up to 64 MiB (:data:`CACHE_KIB`; SQLite's
default is 2 MiB, less than the pages one MCL batch of 2,000 records upserts on): the aspects' pages a batch touches
stay in memory instead of being read again through the OS (the in-process intake, batches of 2,000: 20.4k -> 21.7k
records per CPU-second); what a commit writes and syncs is the same. Tables as :mod:`libs.datahub.mcl.mirror_store`
describes; no feed (one writer).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from libs.datahub.mcl.mirror_store import (
    DEFAULT_MAX_CHANGES,
    MIRROR_FILE_NAME,
    ChangeRow,
    FeedPage,
    MirrorWrite,
    StoredAspect,
    TopicPartition,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS aspects (
    urn TEXT NOT NULL,
    aspect TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    json TEXT NOT NULL,
    facts TEXT,
    PRIMARY KEY (urn, aspect)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS offsets (
    topic TEXT NOT NULL,
    partition INTEGER NOT NULL,
    next_offset INTEGER NOT NULL,
    PRIMARY KEY (topic, partition)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS changes (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    entity_urn TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    aspect TEXT NOT NULL,
    change_type TEXT NOT NULL,
    time_ms INTEGER,
    actor TEXT,
    previous TEXT,
    current TEXT,
    change_key TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS one_change ON changes (entity_urn, aspect, change_key);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS seen_risks (fingerprint TEXT PRIMARY KEY, remembered_at TEXT NOT NULL) WITHOUT ROWID;
"""
_READ_CHUNK = 5_000
CACHE_KIB = 65_536
"""The page cache of a mirror file's connection, in KiB (``PRAGMA cache_size`` takes it negative)."""
_CHANGE_COLUMNS = "entity_urn, entity_type, aspect, change_type, time_ms, actor, previous, current, change_key"


class SqliteMirrorStore:
    shared = False

    def __init__(self, connection: sqlite3.Connection, max_changes: int = DEFAULT_MAX_CHANGES) -> None:
        self._db = connection
        self._db.executescript(_SCHEMA)
        self._max_changes = max_changes
        self._lock = threading.Lock()
        """The service reads (its other handler's thread) while the MCL batch writes: one statement at a time."""

    @classmethod
    def open(cls, path: Path | str, max_changes: int = DEFAULT_MAX_CHANGES) -> SqliteMirrorStore:
        """Open (or create) a store file; a directory gets ``mirror.sqlite`` inside it."""
        path = Path(path)
        if path.is_dir():
            path = path / MIRROR_FILE_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA wal_autocheckpoint=20000")
        connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        return cls(connection, max_changes)

    @classmethod
    def in_memory(cls, max_changes: int = DEFAULT_MAX_CHANGES) -> SqliteMirrorStore:
        return cls(sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False), max_changes)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- reads -----------------------------------------------------------------------------------------

    def aspect_json(self, urn: str, aspect_name: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT json FROM aspects WHERE urn = ? AND aspect = ?", (urn, aspect_name)
            ).fetchone()
        return row[0] if row else None

    def stored_aspect(self, urn: str, aspect_name: str) -> StoredAspect | None:
        with self._lock:
            row = self._db.execute(
                "SELECT entity_type, json, facts FROM aspects WHERE urn = ? AND aspect = ?", (urn, aspect_name)
            ).fetchone()
        return StoredAspect(urn, aspect_name, row[0], row[1], row[2]) if row else None

    def all_aspects(self, aspect_names: Iterable[str] | None = None) -> Iterator[StoredAspect]:
        if aspect_names is None:
            query, parameters = "SELECT urn, aspect, entity_type, json, facts FROM aspects", []
        else:
            parameters = sorted(set(aspect_names))
            marks = ",".join("?" * len(parameters))
            query = f"SELECT urn, aspect, entity_type, json, facts FROM aspects WHERE aspect IN ({marks})"
        with self._lock:
            cursor = self._db.execute(query + " ORDER BY urn, aspect", parameters)
        while True:
            with self._lock:
                rows = cursor.fetchmany(_READ_CHUNK)
            if not rows:
                return
            for urn, aspect_name, entity_type, text, facts in rows:
                yield StoredAspect(urn, aspect_name, entity_type, text, facts)

    def aspect_count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM aspects").fetchone()[0])

    def offsets(self) -> dict[TopicPartition, int]:
        with self._lock:
            rows = self._db.execute("SELECT topic, partition, next_offset FROM offsets").fetchall()
        return {(topic, partition): offset for topic, partition, offset in rows}

    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def counters(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT name, value FROM counters").fetchall()
        return {name: int(value) for name, value in rows}

    def recent_changes(self) -> list[ChangeRow]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_CHANGE_COLUMNS} FROM changes ORDER BY position").fetchall()
        return [ChangeRow(*row) for row in rows]

    def seen(self, fingerprint: str) -> bool:
        with self._lock:
            row = self._db.execute("SELECT 1 FROM seen_risks WHERE fingerprint = ?", (fingerprint,)).fetchone()
        return row is not None

    def feed_position(self) -> int:
        return 0

    def changed_since(self, seq: int) -> FeedPage | None:
        return FeedPage(seq, [])

    # --- writes ----------------------------------------------------------------------------------------

    def write(self, batch: MirrorWrite) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._write(batch)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _write(self, batch: MirrorWrite) -> None:
        db = self._db
        db.executemany("DELETE FROM aspects WHERE urn = ?", ((urn,) for urn in batch.deleted_entities))
        db.executemany("DELETE FROM aspects WHERE urn = ? AND aspect = ?", batch.deletes)
        db.executemany(
            "INSERT INTO aspects (urn, aspect, entity_type, json, facts) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (urn, aspect) DO UPDATE SET "
            "entity_type = excluded.entity_type, json = excluded.json, facts = excluded.facts",
            ((row.urn, row.aspect_name, row.entity_type, row.json, row.facts) for row in batch.upserts),
        )
        db.executemany(
            "INSERT INTO offsets (topic, partition, next_offset) VALUES (?, ?, ?) "
            "ON CONFLICT (topic, partition) DO UPDATE SET next_offset = excluded.next_offset",
            ((topic, partition, offset) for (topic, partition), offset in batch.offsets.items()),
        )
        db.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            batch.meta.items(),
        )
        if batch.changes:
            db.executemany(
                f"INSERT OR IGNORE INTO changes ({_CHANGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (change.values() for change in batch.changes),
            )
            db.execute(
                "DELETE FROM changes WHERE position <= (SELECT MAX(position) FROM changes) - ?", (self._max_changes,)
            )
        db.executemany(
            "INSERT INTO counters (name, value) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value",
            batch.counter_increments.items(),
        )
        db.executemany(
            "INSERT INTO seen_risks (fingerprint, remembered_at) VALUES (?, ?) ON CONFLICT (fingerprint) DO NOTHING",
            batch.seen_fingerprints,
        )
