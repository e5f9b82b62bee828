"""Both ledger layouts work: a new ledger keys its indexes by incident (few index pages per append), and a ledger
created before (a unique `event_id`, an `envelope_digest` index) appends, repeats, looks up and verifies as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from libs.ledger import LedgerStore, verify_all
from tests.support.sample_events import SampleKeys, abstained_incident, repaired_incident, sample_incident_id

_BEFORE = """
CREATE TABLE ledger_events (
    position INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    incident_id VARCHAR(64) NOT NULL,
    sequence INTEGER NOT NULL,
    event_id VARCHAR(64) NOT NULL,
    event_type VARCHAR(64) NOT NULL,
    event_version VARCHAR(16) NOT NULL,
    producer VARCHAR(64) NOT NULL,
    signer_keyid VARCHAR(128) NOT NULL,
    causation_id VARCHAR(64),
    envelope TEXT NOT NULL,
    envelope_digest VARCHAR(64) NOT NULL,
    prev_hash VARCHAR(64) NOT NULL,
    hash VARCHAR(64) NOT NULL,
    appended_at DATETIME NOT NULL,
    CONSTRAINT uq_ledger_events_incident_sequence UNIQUE (incident_id, sequence),
    UNIQUE (event_id)
);
CREATE INDEX ix_ledger_events_envelope_digest ON ledger_events (envelope_digest);
"""


def _index_columns(path: Path) -> list[list[str]]:
    with sqlite3.connect(path) as connection:
        names = [r[1] for r in connection.execute("PRAGMA index_list(ledger_events)")]
        return sorted([r[2] for r in connection.execute(f"PRAGMA index_info({n})")] for n in names)


def _exercise(path: Path, keys: SampleKeys) -> None:
    first, second = repaired_incident(keys, "l1"), abstained_incident(keys, "l2")
    with LedgerStore(f"sqlite:///{path}") as store:
        store.create_schema()
        assert all(r.appended for r in store.append_batch([*first[:4], *second]))
        again = store.append_batch([first[3], *first[4:], second[0]])
        assert [r.appended for r in again] == [False, True, True, False]
        assert (again[0].sequence, again[3].sequence) == (4, 1)
        a = sample_incident_id("l1")
        assert store.event(first[2].event.meta.event_id, a).sequence == 3  # type: ignore[union-attr]
        assert store.event_with_digest(first[5].digest, a).sequence == 6  # type: ignore[union-attr]
        assert store.stored_event_ids([(a, first[0].event.meta.event_id), (a, second[0].event.meta.event_id)]) == {
            first[0].event.meta.event_id
        }
        assert store.count() == 9 and all(r.ok for r in verify_all(store, keys.registry))


def test_a_new_ledger_keys_its_indexes_by_incident(db_path: Path, keys: SampleKeys) -> None:
    _exercise(db_path, keys)
    assert _index_columns(db_path) == [["incident_id", "event_id"], ["incident_id", "sequence"]]


def test_a_ledger_created_before_keeps_its_layout_and_works_alike(db_path: Path, keys: SampleKeys) -> None:
    with sqlite3.connect(db_path) as connection:
        connection.executescript(_BEFORE)

    _exercise(db_path, keys)

    assert _index_columns(db_path) == [["envelope_digest"], ["event_id"], ["incident_id", "sequence"]]
