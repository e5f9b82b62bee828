"""A small SQLite-backed set of change fingerprints already reported, so a repeated change is reported once.

The context service keeps its set in the metadata mirror's store instead, written with the mirror's state
(:class:`services.context.mcl_intake.MclIntake`); this file-backed one serves direct callers of
:func:`services.context.upstream_risk.handle_upstream_mcl`. Both answer :class:`SeenRisks`.

Call :meth:`RiskDeduplicator.remember` after the risk event was published: a crash in between then
re-publishes (harmless, event ids are deterministic) instead of losing the report.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Protocol

DEDUP_FILE_NAME = "upstream-risk-seen.sqlite"


class SeenRisks(Protocol):
    """Whether a change was reported already (the context service keeps the set in the mirror's store)."""

    def seen(self, fingerprint: str) -> bool: ...


class RiskDeduplicator:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS seen_changes (fingerprint TEXT PRIMARY KEY, remembered_at TEXT NOT NULL) "
            "WITHOUT ROWID"
        )

    @classmethod
    def open(cls, path: Path | str) -> RiskDeduplicator:
        """Open (or create) the seen-set file; a directory gets ``upstream-risk-seen.sqlite`` inside it."""
        path = Path(path)
        if path.is_dir():
            path = path / DEDUP_FILE_NAME
        return cls(sqlite3.connect(path, isolation_level=None, check_same_thread=False))

    @classmethod
    def in_memory(cls) -> RiskDeduplicator:
        return cls(sqlite3.connect(":memory:", isolation_level=None))

    def fingerprints(self) -> list[tuple[str, str]]:
        """Every (fingerprint, remembered at), to carry an older seen-set file over into the mirror's store."""
        return [(str(f), str(at)) for f, at in self._db.execute("SELECT fingerprint, remembered_at FROM seen_changes")]

    def seen(self, fingerprint: str) -> bool:
        row = self._db.execute("SELECT 1 FROM seen_changes WHERE fingerprint = ?", (fingerprint,)).fetchone()
        return row is not None

    def remember(self, fingerprint: str, remembered_at: str) -> None:
        self._db.execute(
            "INSERT INTO seen_changes (fingerprint, remembered_at) VALUES (?, ?) ON CONFLICT (fingerprint) DO NOTHING",
            (fingerprint, remembered_at),
        )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM seen_changes").fetchone()[0]

    def close(self) -> None:
        self._db.close()
