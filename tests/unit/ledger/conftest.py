"""A fresh SQLite ledger per test, and one set of real producer keys for the whole session."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from libs.ledger import LedgerStore
from tests.support.sample_events import SampleKeys


@pytest.fixture(scope="session")
def keys() -> SampleKeys:
    return SampleKeys.generate()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[LedgerStore]:
    ledger = LedgerStore(f"sqlite:///{db_path}")
    ledger.create_schema()
    yield ledger
    ledger.close()


class Attacker:
    """Someone with write access to the database file: drops the guard, then edits rows."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path

    def execute(self, sql: str, *params: object) -> None:
        with sqlite3.connect(self.db_path) as connection:
            for table in ("ledger_events", "ledger_checkpoints"):
                for op in ("update", "delete"):
                    connection.execute(f"DROP TRIGGER IF EXISTS {table}_no_{op}")
            connection.execute(sql, params)

    def read(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        with sqlite3.connect(self.db_path) as connection:
            return list(connection.execute(sql, params))


@pytest.fixture
def attacker(db_path: Path) -> Attacker:
    return Attacker(db_path)
