"""Which notifications were sent: one per incident, state and channel (a dry run apart from a real send).

Kept in the publisher's state folder. A notification is recorded after the receiver accepted it, so a crash in
between sends it once more (at least once); the delivery id it carries lets a receiver drop the repeat.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

from libs.state_file import open_state_file


class NotificationLog:
    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = open_state_file(
            path,
            "CREATE TABLE IF NOT EXISTS sent (incident_id TEXT NOT NULL, state TEXT NOT NULL, channel TEXT NOT NULL, "
            "dry_run INTEGER NOT NULL, content_digest TEXT NOT NULL, sent_at TEXT NOT NULL, "
            "PRIMARY KEY (incident_id, state, channel, dry_run))",
        )

    def was_sent(self, incident_id: str, state: str, channel: str, dry_run: bool) -> bool:
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM sent WHERE incident_id = ? AND state = ? AND channel = ? AND dry_run = ?",
                (incident_id, state, channel, int(dry_run)),
            ).fetchone()
        return row is not None

    def record(self, incident_id: str, state: str, channel: str, dry_run: bool, content_digest: str) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO sent VALUES (?, ?, ?, ?, ?, ?)",
                (incident_id, state, channel, int(dry_run), content_digest, now),
            )
