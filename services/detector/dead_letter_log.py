"""The detector's own record of the dead-letter topic, by incident and CI run, so a verdict can say at once that
a service refused the run's input, and why.

Kept in a small SQLite file in the detector's state folder (beside its processed inputs), filled by its own
consumer of the dead-letter topic (services.detector.dead_letter_watch): the detector reads no other service's
store for this. A record read twice (a redelivery) is kept once, by its place on the topic.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from libs.bus.dead_letters import DeadLetter
from libs.state_file import open_state_file


@dataclass(frozen=True)
class RefusedInput:
    """What a verdict says of one dead letter: who refused which input of the run, and why."""

    service: str
    source: str
    reason: str
    detail: str

    def line(self, max_chars: int = 400) -> str:
        """One readable line: the service, the refused input, the reason and the first line of its detail."""
        first = next((part.strip() for part in self.detail.splitlines() if part.strip()), "")
        said = f"{self.service} dead-lettered {self.source}: {self.reason}" + (f": {first}" if first else "")
        return said if len(said) <= max_chars else said[: max_chars - 1] + "…"


class DeadLetterLog:
    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = open_state_file(
            path,
            "CREATE TABLE IF NOT EXISTS dead_letters (position TEXT PRIMARY KEY, incident_id TEXT NOT NULL, "
            "run_id TEXT, service TEXT NOT NULL, source TEXT NOT NULL, reason TEXT NOT NULL, detail TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS dead_letters_run ON dead_letters (incident_id, run_id)",
        )

    def record(self, position: str, letter: DeadLetter) -> bool:
        """Keep a dead letter of an incident (its key); one without a key belongs to none and is not kept."""
        if not letter.key:
            return False
        with self._lock:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO dead_letters VALUES (?, ?, ?, ?, ?, ?, ?)",
                (position, letter.key, letter.run_id(), letter.service, letter.source, letter.reason, letter.detail),
            )
        return cursor.rowcount == 1

    def of_run(self, incident_id: str, run_id: str) -> list[RefusedInput]:
        """The run's dead letters in the order they were recorded."""
        with self._lock:
            rows = self._db.execute(
                "SELECT service, source, reason, detail FROM dead_letters WHERE incident_id = ? AND run_id = ? "
                "ORDER BY rowid",
                (incident_id, run_id),
            ).fetchall()
        return [RefusedInput(*row) for row in rows]

    def close(self) -> None:
        self._db.close()
