"""``StateTables`` over a SQLAlchemy engine: the part both adapters share (statements as text, the tables' real
names and the database's clock filled in, one transaction per statement unless grouped)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, TextClause, text
from sqlalchemy.exc import OperationalError

from libs.state.port import Backend, Outcome, Params, Statements

WRITE_OPTION = "modelguard_state_write"
"""An engine's execution option: its transactions write (SQLite begins them with BEGIN IMMEDIATE)."""


class StateUnavailable(RuntimeError):
    """The state database did not answer (PostgreSQL restarting, a network partition); worth a retry."""


class _InTransaction:
    def __init__(self, connection: Connection, tables: EngineTables) -> None:
        self._connection = connection
        self._tables = tables

    def run(self, statement: str, params: Params | None = None) -> Outcome:
        return _outcome(self._connection, self._tables.sql(statement), params)


class EngineTables:
    def __init__(
        self, engine: Engine, backend: Backend, names: Mapping[str, str], now_sql: str, owns_engine: bool
    ) -> None:
        self.backend: Backend = backend
        self._engine = engine
        self._writer = engine.execution_options(**{WRITE_OPTION: True})
        self._names = dict(names)
        self._now_sql = now_sql
        self._owns_engine = owns_engine
        self._compiled: dict[str, TextClause] = {}

    def sql(self, statement: str) -> TextClause:
        """``statement`` with its ``{table}`` names and ``{now}`` filled in (cached: stores reuse a few)."""
        compiled = self._compiled.get(statement)
        if compiled is None:
            compiled = text(statement.format(now=self._now_sql, **self._names))
            self._compiled[statement] = compiled
        return compiled

    def run(self, statement: str, params: Params | None = None) -> Outcome:
        reads = statement.lstrip()[:6].upper() == "SELECT"
        try:
            with (self._engine if reads else self._writer).begin() as connection:
                return _outcome(connection, self.sql(statement), params)
        except OperationalError as exc:
            raise StateUnavailable(_first_line(exc)) from exc

    @contextmanager
    def transaction(self) -> Iterator[Statements]:
        try:
            with self._writer.begin() as connection:
                yield _InTransaction(connection, self)
        except OperationalError as exc:
            raise StateUnavailable(_first_line(exc)) from exc

    def create(self, statements: tuple[str, ...], lock: str | None = None) -> None:
        """Run the ``CREATE … IF NOT EXISTS`` statements in one transaction, after ``lock`` (a statement that
        serialises replicas creating the same tables at once) when given."""
        with self.transaction() as tx:
            if lock is not None:
                tx.run(lock)
            for statement in statements:
                tx.run(statement)

    def close(self) -> None:
        if self._owns_engine:
            self._engine.dispose()


def _outcome(connection: Connection, statement: TextClause, params: Params | None) -> Outcome:
    result = connection.execute(statement, dict(params or {}))
    if result.returns_rows:
        rows = [tuple(row) for row in result.fetchall()]
        return Outcome(rows, len(rows))
    return Outcome([], result.rowcount)


def _first_line(exc: BaseException) -> str:
    orig: Any = getattr(exc, "orig", None) or exc
    return (str(orig).strip().splitlines() or [type(orig).__name__])[0]
