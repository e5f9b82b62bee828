"""The append path as an outsider sees it: whatever a store remembers between appends, each event chains onto what
the database holds, a repeat is a no-op even when another writer stored it, a batch commits whole or not at all,
and a committed append is on disk (SQLite in WAL mode, synchronous FULL) before `append` returns."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError

from libs.events.codec import SignedEvent
from libs.ledger import GENESIS_HASH, LedgerStore, chain_hash, verify_incident
from tests.support.sample_events import SampleKeys, independent_events, repaired_incident, sample_incident_id


def _store(path: Path) -> LedgerStore:
    store = LedgerStore(f"sqlite:///{path}")
    store.create_schema()
    return store


def test_two_stores_taking_turns_on_one_incident_keep_one_chain(db_path: Path, keys: SampleKeys) -> None:
    events = repaired_incident(keys, "turns")
    with _store(db_path) as a, _store(db_path) as b:
        a.append_batch(events[:2])
        b.append(events[2])  # a's memory of the incident's head is now stale
        third = a.append_batch(events[3:5])
        b.append(events[5])

        assert [r.sequence for r in third] == [4, 5]
        rows = a.incident_events(sample_incident_id("turns"))
        assert [r.sequence for r in rows] == [1, 2, 3, 4, 5, 6]
        assert [r.position for r in rows] == [1, 2, 3, 4, 5, 6]
        assert [r.prev_hash for r in rows] == [GENESIS_HASH, *(r.hash for r in rows[:-1])]
        assert verify_incident(a, sample_incident_id("turns"), keys.registry).ok


def test_an_event_another_store_appended_is_a_no_op_and_the_rest_of_the_batch_is_appended(
    db_path: Path, keys: SampleKeys
) -> None:
    events = repaired_incident(keys, "other")
    with _store(db_path) as a, _store(db_path) as b:
        a.append(events[0])
        held = b.append(events[1])

        results = a.append_batch(events[1:4])

        assert [r.appended for r in results] == [False, True, True]
        assert (results[0].position, results[0].sequence, results[0].hash) == (held.position, 2, held.hash)
        assert [r.sequence for r in results[1:]] == [3, 4]
        assert results[1].hash == chain_hash(held.hash, events[2].envelope_bytes)
        assert a.count() == 4
        assert verify_incident(a, sample_incident_id("other"), keys.registry).ok


def test_positions_returned_are_the_rows_positions_after_another_writer(db_path: Path, keys: SampleKeys) -> None:
    first, second = independent_events(keys, "p1", 3), independent_events(keys, "p2", 4)
    with _store(db_path) as a, _store(db_path) as b:
        mine = a.append_batch(first[:2])
        b.append_batch(second)
        later = a.append_batch(first[2:])

        assert [r.position for r in mine] == [1, 2]
        assert [r.position for r in later] == [7]
        assert a.event(first[2].event.meta.event_id, first[2].event.meta.incident_id).position == 7  # type: ignore[union-attr]


def test_a_batch_the_database_refuses_halfway_leaves_nothing_behind_and_the_next_one_chains_on(
    db_path: Path, keys: SampleKeys
) -> None:
    events = repaired_incident(keys, "fails")
    with _store(db_path) as store:
        store.append(events[0])
        unnamed = events[2].event.model_copy(
            update={"meta": events[2].event.meta.model_copy(update={"producer": None})}
        )
        broken = SignedEvent(unnamed, events[2].envelope, events[2].envelope_bytes, events[2].signer)

        with pytest.raises(IntegrityError):  # producer NOT NULL: the second row of the batch fails
            store.append_batch([events[1], broken])

        assert store.count() == 1
        results = store.append_batch(events[1:3])
        assert [(r.appended, r.sequence, r.position) for r in results] == [(True, 2, 2), (True, 3, 3)]
        assert verify_incident(store, sample_incident_id("fails"), keys.registry).ok


def test_a_sqlite_ledger_is_written_ahead_and_synced_at_every_commit(db_path: Path, keys: SampleKeys) -> None:
    with _store(db_path) as store:
        store.append(repaired_incident(keys, "durable")[0])
        assert store.durability() == ("wal", "full")
    with sqlite3.connect(db_path) as reader:
        assert reader.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_an_incident_appended_before_the_store_started_chains_on_and_is_not_started_again(
    db_path: Path, keys: SampleKeys
) -> None:
    """A store takes an incident it never appended to as a new chain (no read) while its memory is trusted: one the
    ledger already holds must still chain onto its head, whichever store appended it and whenever."""
    old, new = repaired_incident(keys, "before-restart"), repaired_incident(keys, "after-restart")
    with _store(db_path) as earlier:
        earlier.append_batch(old[:3])
    with _store(db_path) as restarted:
        restarted.append(new[0])  # the store's memory is now trusted, and knows only this incident
        mixed = restarted.append_batch([new[1], old[3], new[2]])
        later = restarted.append(old[4])

        assert [(r.appended, r.sequence) for r in mixed] == [(True, 2), (True, 4), (True, 3)]
        assert (later.appended, later.sequence) == (True, 5)
        rows = restarted.incident_events(sample_incident_id("before-restart"))
        assert [r.sequence for r in rows] == [1, 2, 3, 4, 5]
        assert [r.prev_hash for r in rows] == [GENESIS_HASH, *(r.hash for r in rows[:-1])]
        for incident in ("before-restart", "after-restart"):
            assert verify_incident(restarted, sample_incident_id(incident), keys.registry).ok


def test_a_store_whose_memory_filled_up_chains_forgotten_incidents_on(db_path: Path, keys: SampleKeys) -> None:
    first, second, third = (repaired_incident(keys, f"forgotten-{n}") for n in range(3))
    with _store(db_path) as store:
        store._appender._heads.capacity = 1  # remember one incident at a time
        store.append_batch(first[:2])
        store.append_batch(second[:2])  # the memory is full: the first incident is forgotten
        store.append_batch(third[:1])
        results = store.append_batch([first[2], second[2]])

        assert [(r.appended, r.sequence) for r in results] == [(True, 3), (True, 3)]
        for incident in ("forgotten-0", "forgotten-1", "forgotten-2"):
            assert verify_incident(store, sample_incident_id(incident), keys.registry).ok


def test_a_new_incident_is_appended_without_reading_a_head_once_the_store_is_trusted(
    db_path: Path, keys: SampleKeys
) -> None:
    with _store(db_path) as store:
        store.append(repaired_incident(keys, "trusted")[0])  # the first append reads what it needs
        statements: list[str] = []
        store._appender.backend.connection().set_trace_callback(statements.append)  # type: ignore[attr-defined]

        store.append_batch(repaired_incident(keys, "brand-new")[:2])

        assert statements[0] == "BEGIN IMMEDIATE" and statements[-1] == "COMMIT"
        assert [s for s in statements if s.startswith("SELECT")] == [s for s in statements if "sqlite_sequence" in s]
        assert sum(s.startswith("INSERT") for s in statements) == 2


def test_a_wrong_guess_forgets_only_the_heads_of_its_own_batch(db_path: Path, keys: SampleKeys) -> None:
    """After a restart, the first append to an incident the ledger already held costs one refused attempt; the
    heads the store remembers of other incidents stay trusted (the ledger did not move), so appending to them
    again reads nothing and is refused nothing."""
    old = repaired_incident(keys, "held-before")
    with _store(db_path) as earlier:
        earlier.append_batch(old[:2])
    with _store(db_path) as restarted:
        kept = [repaired_incident(keys, f"remembered-{n}") for n in range(3)]
        restarted.append_batch([chain[0] for chain in kept])  # the memory is trusted and knows these three
        restarted.append(old[2])  # guessed new, refused, tried again reading its head
        statements: list[str] = []
        restarted._appender.backend.connection().set_trace_callback(statements.append)  # type: ignore[attr-defined]

        results = restarted.append_batch([chain[1] for chain in kept])

        assert [(r.appended, r.sequence) for r in results] == [(True, 2)] * 3
        assert statements.count("BEGIN IMMEDIATE") == 1 and "ROLLBACK" not in statements
        assert [s for s in statements if s.startswith("SELECT")] == [s for s in statements if "sqlite_sequence" in s]
        for incident in ("held-before", *(f"remembered-{n}" for n in range(3))):
            assert verify_incident(restarted, sample_incident_id(incident), keys.registry).ok
