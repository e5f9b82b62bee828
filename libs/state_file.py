"""A service's small SQLite state file: one connection shared by its threads (callers hold their own lock around
each use), autocommit, WAL so readers never wait for the writer, and the file's tables created if missing."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_state_file(path: Path, *schema: str) -> sqlite3.Connection:
    """The connection to ``path`` (its folder made), after running each ``CREATE … IF NOT EXISTS`` of ``schema``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    for statement in schema:
        connection.execute(statement)
    return connection
