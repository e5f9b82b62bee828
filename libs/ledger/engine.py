"""Engines for the two supported databases, tuned for one writer at a time and many readers.

SQLite: WAL (readers never block the writer), a busy timeout, and SQLAlchemy (not the sqlite3 module)
emitting BEGIN, so a write transaction starts with BEGIN IMMEDIATE and takes the write lock before it
reads the incident's head. PostgreSQL: writers take a transaction-scoped advisory lock (see store).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url

SQLITE_BUSY_TIMEOUT_S = 30.0
WRITE_OPTION = "modelguard_ledger_write"


def ledger_engine(url: str) -> Engine:
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(url, parsed.database)
    if backend == "postgresql":
        return create_engine(url, pool_pre_ping=True, pool_size=2, max_overflow=8)
    raise ValueError(f"the ledger supports sqlite:/// and postgresql+psycopg:// URLs, not {backend}")


def writer(engine: Engine) -> Engine:
    """The same engine and pool, whose transactions are write transactions."""
    return engine.execution_options(**{WRITE_OPTION: True})


def _sqlite_engine(url: str, database: str | None) -> Engine:
    if not database or database == ":memory:":
        raise ValueError("the ledger needs an SQLite file (sqlite:///path/to/ledger.db), not an in-memory database")
    Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN, see _on_begin
        cursor = dbapi_connection.cursor()
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine
