"""The detector's own record of the dead-letter topic, by incident and CI run, so a verdict can say at once that
a service refused the run's input, and why.

Kept in the detector's state (``libs/state``: a SQLite file beside its processed inputs, or PostgreSQL shared by
its replicas), filled by its own consumer of the dead-letter topic (services.detector.dead_letter_watch): the
detector reads no other service's store for this. A record read twice (a redelivery, or two replicas after a
rebalance) is kept once, by its place on the topic.
"""

from __future__ import annotations

from dataclasses import dataclass

from libs.bus.dead_letters import DeadLetter
from libs.state.port import StateDatabase, StateSchema, StateTables

DEAD_LETTER_LOG = StateSchema(
    file="dead_letters.sqlite",
    tables=("dead_letters",),
    create=(
        "CREATE TABLE IF NOT EXISTS {dead_letters} (position TEXT PRIMARY KEY, incident_id TEXT NOT NULL, "
        "run_id TEXT, service TEXT NOT NULL, source TEXT NOT NULL, reason TEXT NOT NULL, detail TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS {dead_letters}_run ON {dead_letters} (incident_id, run_id)",
    ),
    # PostgreSQL has no rowid: the order records were kept in is an identity column
    create_postgresql=(
        "CREATE TABLE IF NOT EXISTS {dead_letters} (position TEXT PRIMARY KEY, incident_id TEXT NOT NULL, "
        "run_id TEXT, service TEXT NOT NULL, source TEXT NOT NULL, reason TEXT NOT NULL, detail TEXT NOT NULL, "
        "kept BIGINT GENERATED ALWAYS AS IDENTITY)",
        "CREATE INDEX IF NOT EXISTS {dead_letters}_run ON {dead_letters} (incident_id, run_id)",
    ),
)
_KEEP = (
    "INSERT INTO {dead_letters} (position, incident_id, run_id, service, source, reason, detail) "
    "VALUES (:position, :incident_id, :run_id, :service, :source, :reason, :detail) "
    "ON CONFLICT (position) DO NOTHING"
)
_OF_RUN = (
    "SELECT service, source, reason, detail FROM {dead_letters} WHERE incident_id = :incident_id AND run_id = :run_id "
    "ORDER BY "
)


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
    def __init__(self, tables: StateTables) -> None:
        self._tables = tables
        self._of_run = _OF_RUN + ("rowid" if tables.backend == "sqlite" else "kept")

    @classmethod
    def of(cls, state: StateDatabase, service: str) -> DeadLetterLog:
        return cls(state.tables(service, DEAD_LETTER_LOG))

    def record(self, position: str, letter: DeadLetter) -> bool:
        """Keep a dead letter of an incident (its key); one without a key belongs to none and is not kept."""
        if not letter.key:
            return False
        kept = self._tables.run(
            _KEEP,
            {
                "position": position,
                "incident_id": letter.key,
                "run_id": letter.run_id(),
                "service": letter.service,
                "source": letter.source,
                "reason": letter.reason,
                "detail": letter.detail,
            },
        )
        return kept.rowcount == 1

    def of_run(self, incident_id: str, run_id: str) -> list[RefusedInput]:
        """The run's dead letters in the order they were recorded."""
        rows = self._tables.run(self._of_run, {"incident_id": incident_id, "run_id": run_id}).rows
        return [RefusedInput(*row) for row in rows]

    def close(self) -> None:
        self._tables.close()
