"""The embedded adapter: each store a SQLite file in its service's state folder, as before the port.

WAL (readers never wait for the writer), a busy timeout, and write transactions begun with BEGIN IMMEDIATE so
two processes sharing a file (two replicas on one host) take the write lock before they read: a claim is one
statement, atomic across processes. ``synchronous`` as the store's schema asks (``StateSchema.replayable``).
"""

from __future__ import annotations

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
            if cursor.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA synchronous={synchronous}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        writes = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")

    return engine


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
