"""The store: one hash chain per incident, a global order, and an append of a known event id is a no-op."""

from __future__ import annotations

from pathlib import Path

from libs.canonical_json import sha256_hex
from libs.ledger import GENESIS_HASH, LedgerStore, chain_hash
from tests.support.sample_events import SampleKeys, abstained_incident, repaired_incident, sample_incident_id


def test_events_chain_per_incident_in_global_order(store: LedgerStore, keys: SampleKeys) -> None:
    first, second = repaired_incident(keys, "first"), abstained_incident(keys, "second")
    interleaved = [first[0], second[0], first[1], second[1], *first[2:], second[2]]
    results = [store.append(e) for e in interleaved]

    assert all(r.appended for r in results)
    assert [r.position for r in results] == list(range(1, 10))
    rows = store.incident_events(sample_incident_id("first"))
    assert [r.sequence for r in rows] == [1, 2, 3, 4, 5, 6]
    assert [r.event_id for r in rows] == [e.event.meta.event_id for e in first]
    assert rows[0].prev_hash == GENESIS_HASH
    for previous, row, signed in zip([None, *rows], rows, first, strict=False):
        assert row.prev_hash == (previous.hash if previous else GENESIS_HASH)
        assert row.hash == sha256_hex(bytes.fromhex(row.prev_hash) + bytes.fromhex(sha256_hex(signed.envelope_bytes)))
        assert row.envelope_bytes == signed.envelope_bytes
        assert row.envelope_digest == signed.digest
        assert row.signer_keyid == keys.keys[signed.event.meta.producer].keyid
    assert [r.sequence for r in store.incident_events(sample_incident_id("second"))] == [1, 2, 3]


def test_appending_a_known_event_id_is_a_no_op_returning_the_row(store: LedgerStore, keys: SampleKeys) -> None:
    events = repaired_incident(keys, "dup")
    first = [store.append(e) for e in events[:3]]

    again = store.append(events[1])

    assert not again.appended
    assert (again.position, again.sequence, again.hash) == (first[1].position, first[1].sequence, first[1].hash)
    assert store.count() == 3
    assert store.append(events[3]).sequence == 4


def test_incident_heads_and_reading_after_a_position(store: LedgerStore, keys: SampleKeys) -> None:
    first, second = repaired_incident(keys, "a"), abstained_incident(keys, "b")
    for signed in [*first, *second]:
        store.append(signed)

    heads = {h.incident_id: h for h in store.incidents()}
    assert heads[sample_incident_id("a")].sequence == 6
    assert heads[sample_incident_id("a")].event_type == "Published"
    assert heads[sample_incident_id("b")].position == 9
    assert heads[sample_incident_id("b")].hash == store.incident_events(sample_incident_id("b"))[-1].hash

    assert [r.position for r in store.events_after(0, limit=4)] == [1, 2, 3, 4]
    assert [r.position for r in store.events_after(7, limit=100)] == [8, 9]
    assert store.events_after(9) == []
    assert store.count() == 9
    assert store.head_position() == 9
    b, a = sample_incident_id("b"), sample_incident_id("a")
    assert store.event(second[1].event.meta.event_id, b).sequence == 2  # type: ignore[union-attr]
    assert store.event(second[1].event.meta.event_id, a) is None  # not this incident's
    assert store.event("0" * 32, b) is None
    assert store.event_with_digest(first[2].digest, a).event_id == first[2].event.meta.event_id  # type: ignore[union-attr]
    assert store.event_with_digest(first[2].digest, b) is None
    assert store.event_with_digest("0" * 64, a) is None
    assert store.event(second[1].event.meta.event_id).sequence == 2  # type: ignore[union-attr]  # without its incident
    assert store.event_with_digest(first[2].digest).event_id == first[2].event.meta.event_id  # type: ignore[union-attr]


def test_an_empty_ledger(store: LedgerStore) -> None:
    assert (store.count(), store.head_position(), store.incidents(), store.events_after(0)) == (0, 0, [], [])
    assert store.incident_events(sample_incident_id("none")) == []


def test_schema_creation_is_idempotent_and_rows_survive_reopening(db_path: Path, keys: SampleKeys) -> None:
    events = abstained_incident(keys, "reopen")
    with LedgerStore(f"sqlite:///{db_path}") as ledger:
        ledger.create_schema()
        ledger.append(events[0])
    with LedgerStore(f"sqlite:///{db_path}") as ledger:
        ledger.create_schema()
        result = ledger.append(events[1])
        assert (result.sequence, result.position) == (2, 2)
        assert result.hash == chain_hash(
            ledger.incident_events(sample_incident_id("reopen"))[0].hash, events[1].envelope_bytes
        )
