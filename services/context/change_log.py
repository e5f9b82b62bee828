"""The context service's log of recent DataHub changes, fed by the MCL intake: the aspects a diagnosis
reads (schema versions, assertion runs, profiles, incidents, model properties, job inputs and outputs),
each with its previous value, so a regression's snapshot can carry what changed upstream before it.

Kept in the metadata mirror's store (``changes``), written in the same transaction as the mirror's state and
offsets (:meth:`MetadataMirror.flush`), so with several replicas on PostgreSQL every replica reads every
partition's changes. Bounded: the store keeps the newest ``max_changes`` rows.

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
from typing import Any

from contracts.context_snapshot import MetadataChange, Provenance
from libs.datahub.mcl.events import DecodedMcl
from libs.datahub.mcl.mirror_store import ChangeRow, MirrorStore, MirrorWrite

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
OLD_LOG_FILE_NAME = "changes.sqlite"
"""Where the log lived before it moved into the mirror's store (read once by :func:`import_old_log`)."""


def change_row(mcl: DecodedMcl) -> ChangeRow | None:
    """The log entry of an applied MCL, or None when its aspect is not one a diagnosis reads."""
    if mcl.aspect_name not in LOGGED_ASPECTS or not mcl.urn.startswith("urn:li:"):
        return None
    current = mcl.aspect_text if mcl.aspect_text is not None else _json(mcl.aspect_json)
    previous = mcl.previous_aspect_text if mcl.previous_aspect_text is not None else _json(mcl.previous_aspect_json)
    return ChangeRow(
        entity_urn=mcl.urn,
        entity_type=mcl.entity_type,
        aspect=mcl.aspect_name,
        change_type=mcl.change_type,
        time_ms=mcl.created_time_millis,
        actor=mcl.created_actor,
        previous=previous,
        current=current,
        change_key=change_key(mcl),
    )


class ChangeLog:
    """The log as a diagnosis reads it, from the mirror's store."""

    def __init__(self, store: MirrorStore) -> None:
        self._store = store

    def record(self, mcl: DecodedMcl) -> bool:
        """Log one change on its own (the intake logs its entries with the mirror's flush); True when logged."""
        row = change_row(mcl)
        if row is not None:
            self._store.write(MirrorWrite(changes=[row]))
        return row is not None

    def recent(self) -> list[MetadataChange]:
        return [_change(row) for row in self._store.recent_changes()]


def import_old_log(path: Path, store: MirrorStore) -> int:
    """Copy a ``changes.sqlite`` an older version kept beside the mirror into the store, then rename it
    ``changes.sqlite.imported``; how many rows were read (0 when there is no such file)."""
    if not path.is_file():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT entity_urn, entity_type, aspect, change_type, time_ms, actor, previous, current, change_key"
            " FROM changes ORDER BY position"
        ).fetchall()
    except sqlite3.DatabaseError:
        rows = []
    finally:
        db.close()
    changes = [
        ChangeRow(urn, entity_type, aspect, change_type, time_ms, actor, previous, current, key or f"position:{index}")
        for index, (urn, entity_type, aspect, change_type, time_ms, actor, previous, current, key) in enumerate(rows)
    ]
    store.write(MirrorWrite(changes=changes))
    path.rename(path.with_name(path.name + ".imported"))
    return len(changes)


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


def _json(value: dict[str, Any] | None) -> str | None:
    return json.dumps(value, sort_keys=True) if value is not None else None


def _change(row: ChangeRow) -> MetadataChange:
    time_ms, actor = row.time_ms, row.actor
    changed_at = datetime.fromtimestamp(time_ms / 1000, tz=UTC).isoformat() if time_ms is not None else None
    return MetadataChange(
        entity_urn=row.entity_urn,
        entity_type=row.entity_type,
        aspect=row.aspect,
        change_type=row.change_type,
        changed_at=changed_at,
        actor=actor if actor and actor.startswith("urn:li:") else None,
        previous=json.loads(row.previous) if row.previous else None,
        current=json.loads(row.current) if row.current else None,
        provenance=Provenance(
            provider="mcl",
            urn=row.entity_urn,
            aspect=row.aspect,
            fetched_at=changed_at or "1970-01-01T00:00:00+00:00",
            location="MetadataChangeLog",
        ),
    )
