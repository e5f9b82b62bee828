"""SQLite persistence of the metadata mirror (``mirror.sqlite``): latest aspects, consumer offsets, meta.

Tables:

- ``aspects(urn, aspect, entity_type, json, facts)``, keyed (urn, aspect): the latest value of every
  mirrored aspect in DataHub's JSON form, and for indexed aspects what the mirror derived from it (so a
  restart rebuilds the indexes without decoding every aspect into SDK classes again);
- ``offsets(topic, partition, next_offset)``: the next offset to consume per partition, written in the
  same transaction as the aspects it covers, so a restart resumes exactly where the persisted state is;
- ``meta(key, value)``: e.g. what the mirror was bootstrapped from.

Writes are batched by the caller (:meth:`MirrorStore.write`): one transaction per batch.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

MIRROR_FILE_NAME = "mirror.sqlite"

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
"""

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class StoredAspect:
    urn: str
    aspect_name: str
    entity_type: str
    json: str
    facts: str | None = None


class MirrorStore:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        self._db.executescript(_SCHEMA)

    @classmethod
    def open(cls, path: Path | str) -> MirrorStore:
        """Open (or create) a store file; a directory gets ``mirror.sqlite`` inside it."""
        path = Path(path)
        if path.is_dir():
            path = path / MIRROR_FILE_NAME
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        return cls(connection)

    @classmethod
    def in_memory(cls) -> MirrorStore:
        return cls(sqlite3.connect(":memory:", isolation_level=None))

    def close(self) -> None:
        self._db.close()

    # --- reads -----------------------------------------------------------------------------------------

    def aspect_json(self, urn: str, aspect_name: str) -> str | None:
        row = self._db.execute("SELECT json FROM aspects WHERE urn = ? AND aspect = ?", (urn, aspect_name)).fetchone()
        return row[0] if row else None

    def aspect_names(self, urn: str) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT aspect FROM aspects WHERE urn = ? ORDER BY aspect", (urn,))]

    def all_aspects(self, aspect_names: Iterable[str] | None = None) -> Iterator[StoredAspect]:
        """Every stored aspect (optionally only the named ones), ordered by urn then aspect."""
        if aspect_names is None:
            rows = self._db.execute("SELECT urn, aspect, entity_type, json, facts FROM aspects ORDER BY urn, aspect")
        else:
            names = sorted(set(aspect_names))
            marks = ",".join("?" * len(names))
            rows = self._db.execute(
                f"SELECT urn, aspect, entity_type, json, facts FROM aspects WHERE aspect IN ({marks}) "
                "ORDER BY urn, aspect",
                names,
            )
        for urn, aspect_name, entity_type, text, facts in rows:
            yield StoredAspect(urn, aspect_name, entity_type, text, facts)

    def aspect_count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM aspects").fetchone()[0]

    def offsets(self) -> dict[TopicPartition, int]:
        rows = self._db.execute("SELECT topic, partition, next_offset FROM offsets")
        return {(topic, partition): offset for topic, partition, offset in rows}

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    # --- writes ----------------------------------------------------------------------------------------

    def write(
        self,
        upserts: Iterable[StoredAspect] = (),
        deletes: Iterable[tuple[str, str]] = (),
        deleted_entities: Iterable[str] = (),
        offsets: Mapping[TopicPartition, int] | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> None:
        """Apply one batch in one transaction: entity deletes, then aspect deletes, then upserts."""
        with _transaction(self._db):
            self._db.executemany("DELETE FROM aspects WHERE urn = ?", ((urn,) for urn in deleted_entities))
            self._db.executemany("DELETE FROM aspects WHERE urn = ? AND aspect = ?", deletes)
            self._db.executemany(
                "INSERT INTO aspects (urn, aspect, entity_type, json, facts) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (urn, aspect) DO UPDATE SET "
                "entity_type = excluded.entity_type, json = excluded.json, facts = excluded.facts",
                ((row.urn, row.aspect_name, row.entity_type, row.json, row.facts) for row in upserts),
            )
            self._db.executemany(
                "INSERT INTO offsets (topic, partition, next_offset) VALUES (?, ?, ?) "
                "ON CONFLICT (topic, partition) DO UPDATE SET next_offset = excluded.next_offset",
                ((topic, partition, offset) for (topic, partition), offset in (offsets or {}).items()),
            )
            self._db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (meta or {}).items(),
            )


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
