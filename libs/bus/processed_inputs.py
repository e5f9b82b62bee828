"""A service's memory of the inputs it has handled and the envelopes it answered with, and of the failed
attempts at those it could not handle yet.

A redelivered input is not handled again (that work can be expensive); its recorded outputs are sent
again instead. They carry the same event ids, so consumers and the ledger treat them as duplicates, and
an output lost with a broker comes back when its input is re-sent (`modelguard republish`).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from libs.state_file import open_state_file


class ProcessedInputs:
    """Event ids of handled inputs and their output envelopes, in a small SQLite file owned by one service."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = open_state_file(
            path,
            "CREATE TABLE IF NOT EXISTS processed (event_id TEXT PRIMARY KEY, outputs TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS attempts (input_id TEXT PRIMARY KEY, failed INTEGER NOT NULL)",
        )

    def outputs_of(self, event_id: str) -> list[bytes] | None:
        """The output envelopes recorded for a handled input; None when the input was never handled."""
        with self._lock:
            row = self._db.execute("SELECT outputs FROM processed WHERE event_id = ?", (event_id,)).fetchone()
        if row is None:
            return None
        return [envelope.encode() for envelope in json.loads(row[0])]

    def mark(self, event_id: str, output_envelopes: list[bytes]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO processed (event_id, outputs) VALUES (?, ?)",
                (event_id, json.dumps([envelope.decode() for envelope in output_envelopes])),
            )

    def failed_attempt(self, input_id: str) -> int:
        """Count one more failed attempt at an input (kept across restarts); how many there have been."""
        with self._lock:
            self._db.execute(
                "INSERT INTO attempts (input_id, failed) VALUES (?, 1) "
                "ON CONFLICT (input_id) DO UPDATE SET failed = failed + 1",
                (input_id,),
            )
            row = self._db.execute("SELECT failed FROM attempts WHERE input_id = ?", (input_id,)).fetchone()
        return int(row[0])

    def close(self) -> None:
        self._db.close()
