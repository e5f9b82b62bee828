"""The embedded adapter: each store a SQLite file in its service's state folder, as before the port.

WAL (readers never wait for the writer), a busy timeout, and write transactions begun with BEGIN IMMEDIATE so
two processes sharing a file (two replicas on one host) take the write lock before they read: a claim is one
statement, atomic across processes. ``synchronous`` as the store's schema asks (``StateSchema.replayable``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Connection, Engine, create_engine, event

from libs.state.port import StateSchema
from libs.state.sql_tables import WRITE_OPTION, EngineTables

BUSY_TIMEOUT_S = 30.0
SQLITE_NOW = "((julianday('now') - 2440587.5) * 86400.0)"
"""The clock in epoch seconds, as SQLite computes it (one value for a whole statement)."""


def sqlite_file_engine(path: Path, synchronous: str = "FULL") -> Engine:
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        URL.create("sqlite", database=str(path)),
        connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN, see _on_begin
        cursor = dbapi_connection.cursor()
        try:
            use_wal(cursor)
            cursor.execute(f"PRAGMA synchronous={synchronous}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        writes = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")

    return engine


WAL_RETRY_S = 0.01


def use_wal(cursor: Any, wait_s: float = BUSY_TIMEOUT_S) -> None:
    """Switch the file to WAL unless it is already. Processes opening a new file at once may each try the switch,
    and SQLite can answer one of them "database is locked" at once, without its busy handler (a wait there could
    deadlock): seen in CI, three processes racing for claims on a fresh file, one died opening it. The switch is
    tried again, reading the mode first (another process may have made the switch), for up to `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(WAL_RETRY_S)


class SqliteState:
    """``state_dir(service)/<schema.file>`` per store; table names as written."""

    def __init__(self, state_dir: Callable[[str], Path]) -> None:
        self._state_dir = state_dir

    def path_of(self, service: str, schema: StateSchema) -> Path:
        return self._state_dir(service) / schema.file

    def tables(self, service: str, schema: StateSchema) -> EngineTables:
        tables = EngineTables(
            sqlite_file_engine(self.path_of(service, schema), "NORMAL" if schema.replayable else "FULL"),
            "sqlite",
            {name: name for name in schema.tables},
            SQLITE_NOW,
            owns_engine=True,
        )
        tables.create(schema.statements_for("sqlite"))
        return tables

    def describe(self) -> str:
        return "SQLite files in each service's state folder"
