"""The context service's log of recent DataHub changes, fed by the MCL consumer: the aspects a diagnosis
reads (schema versions, assertion runs, profiles, incidents, model properties, job inputs and outputs),
each with its previous value, so a regression's snapshot can carry what changed upstream before it.

Bounded: the newest ``max_rows`` records are kept. SQLite in the service's state folder.

Idempotent: a change is kept once per (urn, aspect, change key), the key being the aspect's version in
DataHub (``systemMetadata.version``) when the MCL carries it, else a timeseries value's ``timestampMillis``
(and its ``partitionSpec.partition``: one run per partition), else the MCL's ``created`` time, else the
digest of the value; so a redelivered MCL is not logged again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from contracts.context_snapshot import MetadataChange, Provenance
from libs.datahub.mcl.events import DecodedMcl

LOGGED_ASPECTS = frozenset(
    {
        "schemaMetadata",
        "assertionRunEvent",
        "datasetProfile",
        "incidentInfo",
        "mlModelProperties",
        "dataJobInputOutput",
    }
)
DEFAULT_MAX_ROWS = 20_000
SCHEMA = """
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
    change_key TEXT
);
"""
UNIQUE_CHANGE = "CREATE UNIQUE INDEX IF NOT EXISTS one_change ON changes (entity_urn, aspect, change_key)"


class ChangeLog:
    def __init__(self, connection: sqlite3.Connection, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        self.db, self.max_rows = connection, max_rows
        self.db.executescript(SCHEMA)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(changes)")}
        if "change_key" not in columns:  # a log written before changes were deduplicated
            self.db.execute("ALTER TABLE changes ADD COLUMN change_key TEXT")
        self.db.execute(UNIQUE_CHANGE)

    @classmethod
    def open(cls, path: Path, max_rows: int = DEFAULT_MAX_ROWS) -> ChangeLog:
        path.parent.mkdir(parents=True, exist_ok=True)
        # the consumer's handlers may run on another thread than the one that opened the log
        return cls(sqlite3.connect(path, isolation_level=None, check_same_thread=False), max_rows)

    def record(self, mcl: DecodedMcl) -> bool:
        """Keep the change when its aspect is one a diagnosis reads and it is not logged yet; True when kept."""
        if mcl.aspect_name not in LOGGED_ASPECTS or not mcl.urn.startswith("urn:li:"):
            return False
        inserted = self.db.execute(
            "INSERT OR IGNORE INTO changes"
            " (entity_urn, entity_type, aspect, change_type, time_ms, actor, previous, current, change_key)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                mcl.urn,
                mcl.entity_type,
                mcl.aspect_name,
                mcl.change_type,
                mcl.created_time_millis,
                mcl.created_actor,
                _json(mcl.previous_aspect_json),
                _json(mcl.aspect_json),
                change_key(mcl),
            ),
        ).rowcount
        if not inserted:
            return False
        self.db.execute(
            "DELETE FROM changes WHERE position <= (SELECT MAX(position) FROM changes) - ?", (self.max_rows,)
        )
        return True

    def recent(self) -> list[MetadataChange]:
        rows = self.db.execute(
            "SELECT entity_urn, entity_type, aspect, change_type, time_ms, actor, previous, current"
            " FROM changes ORDER BY position"
        ).fetchall()
        return [_change(*row) for row in rows]


def change_key(mcl: DecodedMcl) -> str:
    """What tells this change from another of the same aspect: version, timestamp, created time or digest."""
    if mcl.aspect_version is not None:
        return f"{mcl.change_type}:version:{mcl.aspect_version}"
    value = mcl.aspect_json or {}
    millis = value.get("timestampMillis")
    if isinstance(millis, int) and not isinstance(millis, bool):
        partition = value.get("partitionSpec")
        within = partition.get("partition") if isinstance(partition, dict) else None
        return f"{mcl.change_type}:timestamp:{millis}" + (f":partition:{within}" if isinstance(within, str) else "")
    if mcl.created_time_millis is not None:
        return f"{mcl.change_type}:created:{mcl.created_time_millis}"
    digest = hashlib.sha256((_json(mcl.aspect_json) or "").encode()).hexdigest()
    return f"{mcl.change_type}:sha256:{digest}"


def _json(value: dict | None) -> str | None:
    return json.dumps(value, sort_keys=True) if value is not None else None


def _change(
    urn: str, entity_type: str, aspect: str, change_type: str, time_ms: int | None, actor: str | None,
    previous: str | None, current: str | None,
) -> MetadataChange:  # fmt: skip
    changed_at = datetime.fromtimestamp(time_ms / 1000, tz=UTC).isoformat() if time_ms is not None else None
    return MetadataChange(
        entity_urn=urn,
        entity_type=entity_type,
        aspect=aspect,
        change_type=change_type,
        changed_at=changed_at,
        actor=actor if actor and actor.startswith("urn:li:") else None,
        previous=json.loads(previous) if previous else None,
        current=json.loads(current) if current else None,
        provenance=Provenance(
            provider="mcl",
            urn=urn,
            aspect=aspect,
            fetched_at=changed_at or "1970-01-01T00:00:00+00:00",
            location="MetadataChangeLog",
        ),
    )
