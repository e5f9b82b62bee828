"""Submitted policies pinned by model: the first accepted document of a model is the one its incidents use.

A later submission of the same bytes is the same pin; different bytes are refused (a pull request cannot
loosen its own gate), until the platform removes the pin (`modelguard policy unpin`) or puts a policy for the
model in its policy folder, which wins over any pin. Kept in a small SQLite file in the detector's state folder.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from libs.model_policies.submission import SubmissionRefused, SubmittedPolicy
from libs.state_file import open_state_file

PINS_FILE = "policy_pins.sqlite"


class PinConflict(SubmissionRefused):
    """The model is pinned to another policy."""


@dataclass(frozen=True)
class Pin:
    model_urn: str
    digest: str
    document: bytes
    """The model's part of the policy, as first submitted (canonical YAML)."""
    pinned_at: str


class PolicyPins:
    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = open_state_file(
            path,
            "CREATE TABLE IF NOT EXISTS pins (model_urn TEXT PRIMARY KEY, digest TEXT NOT NULL, "
            "document BLOB NOT NULL, pinned_at TEXT NOT NULL)",
        )

    def pin(self, submitted: SubmittedPolicy) -> bool:
        """Pin ``submitted`` for its model; True when it is pinned now, False when it already was.

        Raises PinConflict when the model is pinned to another document."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._lock:
            inserted = self._db.execute(
                "INSERT OR IGNORE INTO pins VALUES (?, ?, ?, ?)",
                (submitted.model_urn, submitted.digest, submitted.model_part, now),
            ).rowcount
        if inserted:
            return True
        current = self.pinned(submitted.model_urn)
        if current is not None and current.digest == submitted.digest:
            return False
        if current is None:  # unpinned between the two statements: try once more
            return self.pin(submitted)
        raise PinConflict(
            f"{submitted.model_urn} is pinned to policy sha256:{current.digest[:12]} since {current.pinned_at}; "
            "a change of a model's policy is the platform's: a policy file for the model in the policy folder, "
            "or `modelguard policy unpin` and a new submission"
        )

    def pinned(self, model_urn: str) -> Pin | None:
        with self._lock:
            row = self._db.execute(
                "SELECT model_urn, digest, document, pinned_at FROM pins WHERE model_urn = ?", (model_urn,)
            ).fetchone()
        return None if row is None else Pin(row[0], row[1], bytes(row[2]), row[3])

    def all(self) -> list[Pin]:
        with self._lock:
            rows = self._db.execute(
                "SELECT model_urn, digest, document, pinned_at FROM pins ORDER BY model_urn"
            ).fetchall()
        return [Pin(r[0], r[1], bytes(r[2]), r[3]) for r in rows]

    def unpin(self, model_urn: str) -> bool:
        with self._lock:
            return self._db.execute("DELETE FROM pins WHERE model_urn = ?", (model_urn,)).rowcount == 1

    def close(self) -> None:
        with self._lock:
            self._db.close()
