"""The SQLite ledger's writer: its own connection, prepared statements, BEGIN IMMEDIATE as the writers' lock.

Durability, chosen: WAL with `synchronous=FULL`. Every commit syncs the write-ahead log before `append` returns, so
an append that returned survives a power cut or an OS crash, not only a crash of the process. That matters here:
the ledger service commits its Kafka offsets after the append, so an append lost after its offset was committed
would be an event lost for good. `NORMAL` would sync only at WAL checkpoints (faster per commit; the last commits
may roll back after a power cut, the database stays consistent). Batching is what buys speed instead: one commit,
one sync, per batch (docs/operations.md, "The ledger's durability").
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

from sqlalchemy.exc import DBAPIError, StatementError

from libs.ledger.append_plan import APPEND_COLUMNS, Head, Row
from libs.ledger.engine import SQLITE_BUSY_TIMEOUT_S
from libs.ledger.rows import AppendResult
from libs.ledger.tables import EVENTS_TABLE

SYNCHRONOUS = "FULL"
SYNCHRONOUS_NAMES = {0: "off", 1: "normal", 2: "full", 3: "extra"}

_INSERT = f"INSERT INTO {EVENTS_TABLE} ({', '.join(APPEND_COLUMNS)}) VALUES ({', '.join('?' for _ in APPEND_COLUMNS)})"
_NEWEST = f"SELECT max(position) FROM {EVENTS_TABLE}"
_HEAD = f"SELECT sequence, hash FROM {EVENTS_TABLE} WHERE incident_id = ? ORDER BY sequence DESC LIMIT 1"
_STORED = f"SELECT event_id, position, sequence, hash, envelope_digest FROM {EVENTS_TABLE} WHERE event_id IN "
_IN_CHUNK = 500


def timestamp() -> str:
    """Now, in UTC, written as SQLAlchemy writes an SQLite DateTime (so the store's readers parse it back)."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


class _Transaction:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def newest_position(self) -> int:
        (newest,) = self.connection.execute(_NEWEST).fetchone()
        return int(newest or 0)

    def stored(self, event_ids: Sequence[str]) -> dict[str, AppendResult]:
        found: dict[str, AppendResult] = {}
        for start in range(0, len(event_ids), _IN_CHUNK):
            chunk = event_ids[start : start + _IN_CHUNK]
            query = _STORED + f"({', '.join('?' for _ in chunk)})"
            for event_id, position, sequence, event_hash, digest in self.connection.execute(query, chunk):
                found[event_id] = AppendResult(False, int(position), int(sequence), event_hash, event_id, digest)
        return found

    def heads(self, incident_ids: Sequence[str]) -> dict[str, Head]:
        found: dict[str, Head] = {}
        for incident in incident_ids:
            row = self.connection.execute(_HEAD, (incident,)).fetchone()
            if row is not None:
                found[incident] = (int(row[0]), str(row[1]))
        return found

    def insert(self, rows: Sequence[Row]) -> list[int]:
        self.connection.executemany(_INSERT, rows)
        # under BEGIN IMMEDIATE no one else inserts: AUTOINCREMENT numbers this transaction's rows one after another
        (last,) = self.connection.execute("SELECT last_insert_rowid()").fetchone()
        return list(range(int(last) - len(rows) + 1, int(last) + 1))


class SqliteWriter:
    """One connection for appends, opened at the first append (again in a forked child)."""

    def __init__(self, database: str) -> None:
        self.database = database
        self._connection: sqlite3.Connection | None = None
        self._pid = 0

    def connection(self) -> sqlite3.Connection:
        if self._connection is None or self._pid != os.getpid():
            try:
                connection = sqlite3.connect(
                    self.database, timeout=SQLITE_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
                )
                if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    connection.execute("PRAGMA journal_mode=WAL")
                connection.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
            except sqlite3.Error as exc:
                raise _translated(exc, "open the ledger for writing") from exc
            self._connection, self._pid = connection, os.getpid()
        return self._connection

    @contextmanager
    def begin(self) -> Iterator[_Transaction]:
        connection = self.connection()
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _translated(exc, "BEGIN IMMEDIATE") from exc
        try:
            yield _Transaction(connection)
            connection.execute("COMMIT")
        except BaseException as exc:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise _translated(exc, "append") from exc
            raise

    def timestamp(self) -> object:
        return timestamp()

    def durability(self) -> tuple[str, str]:
        """(journal mode, synchronous) of the writer's connection, as SQLite reports them."""
        connection = self.connection()
        (journal,) = connection.execute("PRAGMA journal_mode").fetchone()
        (synchronous,) = connection.execute("PRAGMA synchronous").fetchone()
        return str(journal), SYNCHRONOUS_NAMES.get(int(synchronous), str(synchronous))

    def close(self) -> None:
        if self._connection is not None and self._pid == os.getpid():
            self._connection.close()
        self._connection = None


def _translated(exc: sqlite3.Error, statement: str) -> StatementError:
    """As SQLAlchemy raises it (IntegrityError, OperationalError, ...), which is what the store's callers catch."""
    return DBAPIError.instance(statement, None, exc, sqlite3.Error)
