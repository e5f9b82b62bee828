"""A service's memory of the inputs it has already handled, so a redelivery does not redo expensive work."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path


class ProcessedInputs:
    """Event ids of handled inputs, in a small SQLite file owned by one service."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS processed (event_id TEXT PRIMARY KEY, outputs TEXT NOT NULL)")

    def seen(self, event_id: str) -> bool:
        with self._lock:
            row = self._db.execute("SELECT 1 FROM processed WHERE event_id = ?", (event_id,)).fetchone()
        return row is not None

    def mark(self, event_id: str, output_event_ids: list[str]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO processed (event_id, outputs) VALUES (?, ?)",
                (event_id, ",".join(output_event_ids)),
            )

    def close(self) -> None:
        self._db.close()
