"""Submitted policies pinned by model: the first accepted document of a model is the one its incidents use.

A later submission of the same bytes is the same pin; different bytes are refused (a pull request cannot
loosen its own gate), until the platform removes the pin (`modelguard policy unpin`) or puts a policy for the
model in its policy folder, which wins over any pin. Kept in the detector's state (``libs/state``: a SQLite file
in its state folder, or PostgreSQL shared by its replicas: two replicas pinning at once, one pin wins).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from libs.policy.model_policies.submission import SubmissionRefused, SubmittedPolicy
from libs.state.port import StateDatabase, StateSchema, StateTables

PINS_FILE = "policy_pins.sqlite"
PINS_SERVICE = "detector"
"""Whose state holds the pins: the detector's (its ingestion pins, its gate reads; ``modelguard policy`` edits)."""
POLICY_PINS = StateSchema(
    file=PINS_FILE,
    tables=("pins",),
    create=(
        "CREATE TABLE IF NOT EXISTS {pins} (model_urn TEXT PRIMARY KEY, digest TEXT NOT NULL, "
        "document BLOB NOT NULL, pinned_at TEXT NOT NULL)",
    ),
    create_postgresql=(
        "CREATE TABLE IF NOT EXISTS {pins} (model_urn TEXT PRIMARY KEY, digest TEXT NOT NULL, "
        "document BYTEA NOT NULL, pinned_at TEXT NOT NULL)",
    ),
)
_PIN = (
    "INSERT INTO {pins} (model_urn, digest, document, pinned_at) VALUES (:model_urn, :digest, :document, :pinned_at) "
    "ON CONFLICT (model_urn) DO NOTHING"
)


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
    def __init__(self, tables: StateTables) -> None:
        self._tables = tables

    @classmethod
    def of(cls, state: StateDatabase) -> PolicyPins:
        return cls(state.tables(PINS_SERVICE, POLICY_PINS))

    def pin(self, submitted: SubmittedPolicy) -> bool:
        """Pin ``submitted`` for its model; True when it is pinned now, False when it already was.

        Raises PinConflict when the model is pinned to another document."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        inserted = self._tables.run(
            _PIN,
            {
                "model_urn": submitted.model_urn,
                "digest": submitted.digest,
                "document": submitted.model_part,
                "pinned_at": now,
            },
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
        row = self._tables.run(
            "SELECT model_urn, digest, document, pinned_at FROM {pins} WHERE model_urn = :model_urn",
            {"model_urn": model_urn},
        ).first()
        return None if row is None else Pin(row[0], row[1], bytes(row[2]), row[3])

    def all(self) -> list[Pin]:
        rows = self._tables.run("SELECT model_urn, digest, document, pinned_at FROM {pins} ORDER BY model_urn").rows
        return [Pin(r[0], r[1], bytes(r[2]), r[3]) for r in rows]

    def unpin(self, model_urn: str) -> bool:
        return (
            self._tables.run("DELETE FROM {pins} WHERE model_urn = :model_urn", {"model_urn": model_urn}).rowcount == 1
        )

    def close(self) -> None:
        self._tables.close()
