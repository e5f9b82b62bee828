"""SQLite refuses every UPDATE and DELETE of ledger rows, whoever sends them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from libs.ledger import LedgerStore, write_checkpoint
from libs.signing.keys import generate_key
from tests.support.sample_events import SampleKeys, passed_incident

REFUSALS = [
    "UPDATE ledger_events SET event_type = 'Published'",
    "UPDATE ledger_events SET envelope = envelope || ' ' WHERE position = 1",
    "DELETE FROM ledger_events WHERE position = 2",
    "DELETE FROM ledger_events",
    "UPDATE ledger_checkpoints SET head_hash = 'x'",
    "DELETE FROM ledger_checkpoints",
]


@pytest.mark.parametrize("statement", REFUSALS)
def test_raw_sql_cannot_change_or_remove_rows(
    store: LedgerStore, keys: SampleKeys, db_path: Path, statement: str
) -> None:
    for signed in passed_incident(keys, "guarded"):
        store.append(signed)
    write_checkpoint(store, generate_key("ledger"))
    before = _dump(db_path)

    with sqlite3.connect(db_path) as connection, pytest.raises(sqlite3.IntegrityError, match="append-only"):
        connection.execute(statement)

    assert _dump(db_path) == before


def test_the_store_has_no_update_or_delete_path() -> None:
    public = {name for name in dir(LedgerStore) if not name.startswith("_")}
    assert not {n for n in public if any(w in n for w in ("update", "delete", "remove", "truncate", "set_"))}


def _dump(db_path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db_path) as connection:
        events = list(connection.execute("SELECT * FROM ledger_events ORDER BY position"))
        return events + list(connection.execute("SELECT * FROM ledger_checkpoints"))
