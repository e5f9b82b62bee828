"""Switching a state file to WAL when another process is switching it too: SQLite may answer "database is locked"
at once, without waiting (seen in CI: one of three processes opening a fresh file at once died); the switch is
tried again, reading the mode first, and any other error is raised as it comes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from libs.state.sqlite_state import sqlite_file_engine, use_wal


class _Cursor:
    """Answers the two pragmas the way a racing file does: `locked` refusals first, then the switch, or another
    process's switch seen on the next read."""

    def __init__(self, locked: int, switched_by_another: bool = False, error: str = "database is locked") -> None:
        self.locked, self.switched_by_another, self.error = locked, switched_by_another, error
        self.mode, self.switches = "delete", 0

    def execute(self, sql: str) -> _Cursor:
        if sql == "PRAGMA journal_mode=WAL":
            self.switches += 1
            if self.locked:
                self.locked -= 1
                if self.switched_by_another:
                    self.mode = "wal"
                raise sqlite3.OperationalError(self.error)
            self.mode = "wal"
        return self

    def fetchone(self) -> tuple[str]:
        return (self.mode,)


def test_a_switch_refused_as_locked_is_tried_again() -> None:
    cursor = _Cursor(locked=2)
    use_wal(cursor, wait_s=5)
    assert cursor.mode == "wal" and cursor.switches == 3


def test_a_switch_another_process_made_meanwhile_is_not_made_again() -> None:
    cursor = _Cursor(locked=1, switched_by_another=True)
    use_wal(cursor, wait_s=5)
    assert cursor.mode == "wal" and cursor.switches == 1


def test_another_error_is_raised_at_once() -> None:
    cursor = _Cursor(locked=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        use_wal(cursor, wait_s=5)
    assert cursor.switches == 1


def test_a_file_locked_past_the_wait_raises() -> None:
    cursor = _Cursor(locked=10**9)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        use_wal(cursor, wait_s=0.05)


def test_a_new_state_file_is_in_wal(tmp_path: Path) -> None:
    engine = sqlite_file_engine(tmp_path / "state.sqlite")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    engine.dispose()
