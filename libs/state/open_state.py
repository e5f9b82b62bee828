"""The services' state database from their settings: PostgreSQL when ``MODELGUARD_STATE_URL`` (or a PostgreSQL
ledger) says so, else SQLite files under the home."""

from __future__ import annotations

from libs.settings import Settings
from libs.state.port import StateDatabase
from libs.state.postgres_state import PostgresState
from libs.state.sqlite_state import SqliteState


def state_database(settings: Settings) -> StateDatabase:
    if settings.state_url is not None:
        return PostgresState(settings.state_url)
    return SqliteState(settings.state_dir)
