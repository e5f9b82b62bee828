"""The ledger on PostgreSQL: the same chain, the database refusing every change, concurrent appenders in
several processes keeping one chain, and an audit that finds what a superuser changed behind its back."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore, replay, verify_all, verify_checkpoints, verify_incident, write_checkpoint
from libs.ledger.verify import incident_batches
from libs.ledger.verify_pool import verify_in_pool
from tests.support.postgres import fresh_schema, libpq_url, postgres_server
from tests.support.sample_events import (
    PRODUCERS,
    SampleKeys,
    abstained_incident,
    independent_events,
    repaired_incident,
    sample_incident_id,
)

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(scope="module")
def keys() -> SampleKeys:
    return SampleKeys.generate([*PRODUCERS, "ledger"])


@pytest.fixture
def store(server_url: str) -> Iterator[LedgerStore]:
    with fresh_schema(server_url) as url:
        ledger = LedgerStore(url)
        ledger.create_schema()
        ledger.create_schema()  # idempotent
        yield ledger
        ledger.close()


def _sql(store: LedgerStore, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(libpq_url(store.url), autocommit=True) as connection:
        cursor = connection.execute(statement, params or None)
        return cursor.fetchall() if cursor.description else []


def test_chains_no_op_duplicates_reads_and_replay(store: LedgerStore, keys: SampleKeys) -> None:
    first, second = repaired_incident(keys, "pg-a"), abstained_incident(keys, "pg-b")
    results = [store.append(e) for e in [first[0], second[0], *first[1:], *second[1:]]]
    duplicate = store.append(first[2])

    assert [r.position for r in results] == list(range(1, 10))
    assert (duplicate.appended, duplicate.position, duplicate.sequence) == (False, 4, 3)
    assert [r.sequence for r in store.incident_events(sample_incident_id("pg-a"))] == [1, 2, 3, 4, 5, 6]
    assert {h.incident_id: h.sequence for h in store.incidents()} == {
        sample_incident_id("pg-a"): 6,
        sample_incident_id("pg-b"): 3,
    }
    assert [r.position for r in store.events_after(7, 10)] == [8, 9]
    assert store.count() == 9
    assert all(r.ok for r in verify_all(store, keys.registry))
    statuses = {i: p.status for i, p in replay(store, keys.registry).items()}
    assert statuses == {sample_incident_id("pg-a"): "published", sample_incident_id("pg-b"): "abstained"}


def test_an_incident_another_store_began_chains_on_where_this_store_guesses_a_new_chain(
    store: LedgerStore, keys: SampleKeys
) -> None:
    """This store's memory is trusted and knows only its own incident: the other incident is taken as new, the
    database refuses its sequence 1 (the rolled-back transaction leaves a gap in the positions), and the batch is
    tried again on the incident's real head."""
    old, new = repaired_incident(keys, "pg-before"), repaired_incident(keys, "pg-after")
    with LedgerStore(store.url) as other:
        other.append_batch(old[:2])
    store.append(new[0])

    results = store.append_batch([old[2], new[1]])

    assert [(r.appended, r.sequence) for r in results] == [(True, 3), (True, 2)]
    assert [r.sequence for r in store.incident_events(sample_incident_id("pg-before"))] == [1, 2, 3]
    assert all(r.ok for r in verify_all(store, keys.registry))


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE ledger_events SET event_type = 'Published'",
        "DELETE FROM ledger_events WHERE position = 1",
        "DELETE FROM ledger_events WHERE false",
        "TRUNCATE ledger_events",
        "UPDATE ledger_checkpoints SET head_hash = 'x'",
        "DELETE FROM ledger_checkpoints",
        "TRUNCATE ledger_checkpoints",
    ],
)
def test_the_database_refuses_update_delete_and_truncate(store: LedgerStore, keys: SampleKeys, statement: str) -> None:
    for signed in abstained_incident(keys, "pg-guarded"):
        store.append(signed)
    write_checkpoint(store, keys.keys["ledger"])
    before = _sql(store, "SELECT * FROM ledger_events ORDER BY position")

    refused = "modelguard ledger is append-only: (UPDATE|DELETE|TRUNCATE) on ledger_"
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match=refused):
        _sql(store, statement)

    assert _sql(store, "SELECT * FROM ledger_events ORDER BY position") == before
    assert len(_sql(store, "SELECT * FROM ledger_checkpoints")) == 1


def test_a_superuser_edit_behind_the_guard_is_found(store: LedgerStore, keys: SampleKeys) -> None:
    events = repaired_incident(keys, "pg-tampered")
    for signed in events:
        store.append(signed)
    write_checkpoint(store, keys.keys["ledger"])
    _sql(store, "ALTER TABLE ledger_events DISABLE TRIGGER ledger_events_no_change")
    (envelope,) = _sql(store, "SELECT envelope FROM ledger_events WHERE position = 4")[0]
    flipped = bytearray(envelope.encode())
    flipped[len(flipped) // 2] ^= 0x01
    _sql(store, "UPDATE ledger_events SET envelope = %s WHERE position = 4", flipped.decode())

    report = verify_incident(store, sample_incident_id("pg-tampered"), keys.registry)

    assert {(p.position, p.event_id, p.event_type) for p in report.problems} == {
        (4, events[3].event.meta.event_id, "RepairProposed")
    }
    # Checkpoints fold the stored hashes, which the edit left alone: the incident audit ties envelopes to
    # hashes, the checkpoints tie the hashes to a signed head. Removing the last event breaks the latter.
    assert verify_checkpoints(store, keys.registry).ok
    _sql(store, "DELETE FROM ledger_events WHERE position = 6")
    assert verify_incident(store, sample_incident_id("pg-tampered"), keys.registry).events_checked == 5
    assert not verify_checkpoints(store, keys.registry).ok


def _append_in_child(url: str, events: list[SignedEvent], start: Any, results: Any) -> None:
    with LedgerStore(url) as store:
        start.wait(timeout=20)
        results.put(sum(store.append(e).appended for e in events))


def test_processes_appending_to_one_incident_keep_one_chain(store: LedgerStore, keys: SampleKeys) -> None:
    appenders, own, shared_count = 3, 6, 2
    events = independent_events(keys, "pg-race", appenders * own + shared_count)
    shared = events[-shared_count:]
    batches = [[*shared, *events[i * own : (i + 1) * own], *shared] for i in range(appenders)]
    context = multiprocessing.get_context("fork")  # children build their own store; nothing is pickled
    start, results = context.Barrier(appenders), context.Queue()
    children = [context.Process(target=_append_in_child, args=(store.url, b, start, results)) for b in batches]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=60)
    appended = [results.get(timeout=1) for c in children if c.exitcode == 0]

    assert [c.exitcode for c in children] == [0] * appenders
    assert sum(appended) == len(events)
    rows = store.incident_events(sample_incident_id("pg-race"))
    assert [r.sequence for r in rows] == list(range(1, len(events) + 1))
    assert [r.position for r in rows] == sorted(r.position for r in rows)
    report = verify_incident(store, sample_incident_id("pg-race"), keys.registry)
    assert report.ok, report.problems


def test_the_whole_ledger_audited_across_processes_finds_what_one_process_finds(
    store: LedgerStore, keys: SampleKeys
) -> None:
    """The auditing process and a helper it starts each open the PostgreSQL ledger themselves and take batches
    from one counter; the reports are those of one process checking one incident at a time, tampering included."""
    for n in range(8):
        for signed in (repaired_incident if n % 2 else abstained_incident)(keys, f"pg-pool-{n}"):
            store.append(signed)
    _sql(store, "ALTER TABLE ledger_events DISABLE TRIGGER ledger_events_no_change")
    _sql(store, "UPDATE ledger_events SET producer = 'publisher' WHERE position = 5")
    one_by_one = [verify_incident(store, head.incident_id, keys.registry) for head in store.incidents()]

    batches = incident_batches(store.incidents(), events=1)  # one incident a batch
    split = verify_in_pool(store, keys.registry, batches, 2)

    assert len(batches) == 8 and split == one_by_one
    assert [r.ok for r in split].count(False) == 1
