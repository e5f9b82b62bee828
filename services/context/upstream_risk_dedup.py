"""A small SQLite-backed set of change fingerprints already reported, so a repeated change is reported once.

Call :meth:`RiskDeduplicator.remember` after the risk event was published: a crash in between then
re-publishes (harmless, event ids are deterministic) instead of losing the report.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

DEDUP_FILE_NAME = "upstream-risk-seen.sqlite"


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
