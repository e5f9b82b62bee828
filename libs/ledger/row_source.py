"""Where the store's hot reads run: plain SQL with named parameters (`:name`), rows back as tuples.

SQLite: one connection per reading thread, kept open (a pool checkout and its reset cost more than reading an
incident's rows), refusing writes (`query_only`); each statement reads one consistent snapshot (WAL). PostgreSQL:
the engine's pool, through SQLAlchemy Core. The same SQL text serves both.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Mapping
from typing import Any, Protocol

from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from libs.ledger.engine import SQLITE_BUSY_TIMEOUT_S

Params = Mapping[str, object]


class RowSource(Protocol):
    def fetch(self, sql: str, params: Params) -> list[tuple[Any, ...]]: ...

    def close(self) -> None: ...


class SqliteRowSource:
    def __init__(self, database: str) -> None:
        self.database = database
        self._local = threading.local()
        self._opened: list[tuple[int, sqlite3.Connection]] = []
        self._guard = threading.Lock()

    def fetch(self, sql: str, params: Params) -> list[tuple[Any, ...]]:
        try:
            return self._connection().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise DBAPIError.instance(sql, dict(params), exc, sqlite3.Error) from exc

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None or getattr(self._local, "pid", None) != os.getpid():
            try:
                connection = sqlite3.connect(
                    self.database, timeout=SQLITE_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
                )
                connection.execute("PRAGMA query_only = 1")
            except sqlite3.Error as exc:
                raise DBAPIError.instance("open the ledger for reading", None, exc, sqlite3.Error) from exc
            self._local.connection, self._local.pid = connection, os.getpid()
            with self._guard:
                self._opened.append((os.getpid(), connection))
        return connection

    def close(self) -> None:
        with self._guard:
            opened, self._opened = self._opened, []
        for pid, connection in opened:
            if pid == os.getpid():  # a forked child leaves its parent's connections alone
                connection.close()
        self._local = threading.local()


class CoreRowSource:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def fetch(self, sql: str, params: Params) -> list[tuple[Any, ...]]:
        with self.engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(sql), dict(params))]

    def close(self) -> None:
        """The store disposes of the engine."""
