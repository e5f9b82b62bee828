"""The port between a store of small state and the database it lives in.

A store (processed inputs, the dead-letter log, policy pins, …) declares its tables as a ``StateSchema`` and
speaks plain SQL through ``StateTables``: named parameters (``:name``), tables named as ``{table}`` and the
database's clock (epoch seconds) as ``{now}``, which the adapter fills in. The SQL is the subset SQLite (3.35
or later) and PostgreSQL share: ``INSERT … ON CONFLICT … DO NOTHING | DO UPDATE … WHERE``, ``RETURNING``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Backend = Literal["sqlite", "postgresql"]
Params = Mapping[str, Any]


@dataclass(frozen=True)
class StateSchema:
    """One store's tables: the SQLite file they live in (in the service's state folder), their names, and the
    statements that create them (``CREATE … IF NOT EXISTS``), with PostgreSQL's own when its types differ.

    ``replayable``: a commit lost with the machine (a power loss, a kernel crash: never a crash of the process) costs
    nothing but work done again, because what it recorded comes again from Kafka. Such a store's SQLite file runs
    WAL with ``synchronous=NORMAL``: a commit is in the WAL, not yet synced, when it returns (SQLite's documentation:
    durable across an application crash, possibly rolled back after a power loss, never corrupt). Otherwise
    ``synchronous=FULL``, a sync per commit (2.2 ms here). PostgreSQL keeps its own setting either way."""

    file: str
    tables: tuple[str, ...]
    create: tuple[str, ...]
    create_postgresql: tuple[str, ...] | None = None
    replayable: bool = False

    def statements_for(self, backend: Backend) -> tuple[str, ...]:
        if backend == "postgresql" and self.create_postgresql is not None:
            return self.create_postgresql
        return self.create


@dataclass(frozen=True)
class Outcome:
    """What a statement returned: its rows (``SELECT``, ``RETURNING``) and how many rows it changed."""

    rows: Sequence[tuple[Any, ...]]
    rowcount: int

    def first(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None


class Statements(Protocol):
    def run(self, statement: str, params: Params | None = None) -> Outcome:
        """One statement; in a transaction of its own unless inside ``StateTables.transaction``."""
        ...


class StateTables(Statements, Protocol):
    """One store's tables in one service's state."""

    backend: Backend

    def transaction(self) -> AbstractContextManager[Statements]:
        """Statements that commit together (a write transaction from the start: SQLite's BEGIN IMMEDIATE)."""
        ...

    def close(self) -> None: ...


class StateDatabase(Protocol):
    """Where the services' small state lives."""

    def tables(self, service: str, schema: StateSchema) -> StateTables:
        """``schema``'s tables for ``service``, created if missing."""
        ...

    def describe(self) -> str:
        """Where, for a log line (no password)."""
        ...
