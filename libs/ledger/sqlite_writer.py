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
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy.exc import DBAPIError, StatementError

from libs.ledger.append_plan import APPEND_COLUMNS, Head, Row
from libs.ledger.engine import SQLITE_BUSY_TIMEOUT_S
from libs.ledger.rows import AppendResult
from libs.ledger.tables import EVENTS_TABLE

SYNCHRONOUS = "FULL"
SYNCHRONOUS_NAMES = {0: "off", 1: "normal", 2: "full", 3: "extra"}

_INSERT = f"INSERT INTO {EVENTS_TABLE} ({', '.join(APPEND_COLUMNS)}) VALUES ({', '.join('?' for _ in APPEND_COLUMNS)})"
# AUTOINCREMENT's counter: the last position ever handed out, never lower than any row's (so also moved by an append
# whose rows were later removed); the next row gets the one after it.
_NEWEST = f"SELECT seq FROM sqlite_sequence WHERE name = '{EVENTS_TABLE}'"
_HEAD = f"SELECT sequence, hash FROM {EVENTS_TABLE} WHERE incident_id = ? ORDER BY sequence DESC LIMIT 1"
_STORED = (
    f"SELECT incident_id, event_id, position, sequence, hash, envelope_digest FROM {EVENTS_TABLE} "
    "WHERE incident_id = ? AND event_id = ?"
)


def timestamp() -> str:
    """Now, in UTC, written as SQLAlchemy writes an SQLite DateTime (YYYY-MM-DD HH:MM:SS.ffffff)."""
    return datetime.now(UTC).isoformat(" ", "microseconds")[:26]


class _Transaction:
    """BEGIN IMMEDIATE on entry (the writers' lock), COMMIT on a clean exit, ROLLBACK on an error; SQLite's errors
    come out as SQLAlchemy's."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def __enter__(self) -> _Transaction:
        try:
            self.connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _translated(exc, "BEGIN IMMEDIATE") from exc
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, _trace: object) -> None:
        if error is None:
            try:
                self.connection.execute("COMMIT")
                return
            except sqlite3.Error as exc:
                error = exc
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")
        if isinstance(error, sqlite3.Error):
            raise _translated(error, "append") from error

    def newest_position(self) -> int:
        found = self.connection.execute(_NEWEST).fetchone()
        return int(found[0]) if found else 0

    def stored(self, events: Sequence[tuple[str, str]]) -> dict[str, AppendResult]:
        found: dict[str, AppendResult] = {}
        for key in events:
            for _, event_id, position, sequence, event_hash, digest in self.connection.execute(_STORED, key):
                found[event_id] = AppendResult(False, int(position), int(sequence), event_hash, event_id, digest)
        return found

    def heads(self, incident_ids: Sequence[str]) -> dict[str, Head]:
        found: dict[str, Head] = {}
        for incident in incident_ids:
            row = self.connection.execute(_HEAD, (incident,)).fetchone()
            if row is not None:
                found[incident] = (int(row[0]), str(row[1]))
        return found

    def insert(self, rows: Sequence[Row], after: int) -> list[int]:
        self.connection.executemany(_INSERT, rows)
        # under BEGIN IMMEDIATE no one else inserts: AUTOINCREMENT numbers the rows on from its counter, one by one
        return list(range(after + 1, after + len(rows) + 1))


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

    def begin(self) -> _Transaction:
        return _Transaction(self.connection())

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
