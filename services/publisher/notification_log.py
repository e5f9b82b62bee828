"""Which notifications were sent: one per incident, state and channel (a dry run apart from a real send).

Kept in the publisher's state (``libs/state``: a SQLite file, or PostgreSQL shared by its replicas). A
notification is recorded after the receiver accepted it, so a crash in between sends it once more (at least
once); the delivery id it carries lets a receiver drop the repeat.
"""

from __future__ import annotations

from datetime import UTC, datetime

from libs.state.port import StateDatabase, StateSchema, StateTables

NOTIFICATION_LOG = StateSchema(
    file="notifications.sqlite",
    tables=("sent",),
    create=(
        "CREATE TABLE IF NOT EXISTS {sent} (incident_id TEXT NOT NULL, state TEXT NOT NULL, channel TEXT NOT NULL, "
        "dry_run INTEGER NOT NULL, content_digest TEXT NOT NULL, sent_at TEXT NOT NULL, "
        "PRIMARY KEY (incident_id, state, channel, dry_run))",
    ),
)


class NotificationLog:
    def __init__(self, tables: StateTables) -> None:
        self._tables = tables

    @classmethod
    def of(cls, state: StateDatabase, service: str = "publisher") -> NotificationLog:
        return cls(state.tables(service, NOTIFICATION_LOG))

    def was_sent(self, incident_id: str, state: str, channel: str, dry_run: bool) -> bool:
        row = self._tables.run(
            "SELECT 1 FROM {sent} WHERE incident_id = :incident_id AND state = :state AND channel = :channel "
            "AND dry_run = :dry_run",
            {"incident_id": incident_id, "state": state, "channel": channel, "dry_run": int(dry_run)},
        )
        return row.first() is not None

    def record(self, incident_id: str, state: str, channel: str, dry_run: bool, content_digest: str) -> None:
        self._tables.run(
            "INSERT INTO {sent} (incident_id, state, channel, dry_run, content_digest, sent_at) "
            "VALUES (:incident_id, :state, :channel, :dry_run, :content_digest, :sent_at) "
            "ON CONFLICT (incident_id, state, channel, dry_run) DO NOTHING",
            {
                "incident_id": incident_id,
                "state": state,
                "channel": channel,
                "dry_run": int(dry_run),
                "content_digest": content_digest,
                "sent_at": datetime.now(UTC).isoformat(timespec="seconds"),
            },
        )
