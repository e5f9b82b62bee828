"""Removing the records last written before a cutoff: what `modelguard evaluations prune` does. Records are a
cache's storage (`records`), so a record removed is only measured again when it is next asked for; a record being
replaced while it is removed is, at worst, one such measurement.

Only files and objects named as records are looked at (`<64 hex>.json`, in their place): a writer's partial file,
another space's records and anything else beside them are never touched."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from libs.artifacts.records import RecordStore, StoredRecord


@dataclass(frozen=True)
class Pruning:
    examined: int
    stale: int
    """Records last written before the cutoff."""
    stale_bytes: int
    removed: int
    """0 unless applied: then every stale record."""


def prune_records(records: RecordStore, before: datetime, *, apply: bool) -> Pruning:
    """The records last written before `before` (an aware datetime), removed when `apply`. Raises
    RecordsUnavailable (one line) when the store cannot be listed or a record cannot be removed."""
    examined, stale = 0, list[StoredRecord]()
    for record in records.listed():
        examined += 1
        if record.written < before:
            stale.append(record)
    if apply:
        records.remove([record.name for record in stale])
    return Pruning(examined, len(stale), sum(record.size for record in stale), len(stale) if apply else 0)
