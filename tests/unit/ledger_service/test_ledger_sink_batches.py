"""The ledger service's sink given a whole poll: one transaction for what can be appended, causes before their
effects whatever order the topics delivered them in, what waits for a cause handed back, one checkpoint per batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore, verify_incident
from services.ledger.handler import LedgerSink
from tests.support.sample_events import SampleKeys, repaired_incident, sample_incident_id


@pytest.fixture(scope="module")
def keys() -> SampleKeys:
    return SampleKeys.generate()


class CountingStore(LedgerStore):
    """A real store that counts the transactions appends take."""

    batches: int = 0

    def append_batch(self, events):  # type: ignore[no-untyped-def]
        self.batches += 1
        return super().append_batch(events)


def _store(tmp_path: Path) -> CountingStore:
    store = CountingStore(f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    store.create_schema()
    return store


def _types(store: LedgerStore, name: str) -> list[str]:
    return [r.event_type for r in store.incident_events(sample_incident_id(name))]


def test_a_poll_with_effects_before_their_causes_is_appended_in_causal_order_in_one_transaction(
    tmp_path: Path, keys: SampleKeys
) -> None:
    store = _store(tmp_path)
    sink = LedgerSink(store, checkpoint=lambda: None)
    first, second = repaired_incident(keys, "b1"), repaired_incident(keys, "b2")
    delivered = [*reversed(first), second[1], second[0], *second[2:]]  # each topic's partition is its own order

    outcome = sink.append_batch(delivered)

    assert outcome.deferred == [] and store.batches == 1
    order = [s.event.meta.event_id for s, _ in outcome.appended]
    assert sorted(order) == sorted(e.event.meta.event_id for e in delivered)
    for signed, _ in outcome.appended:
        cause = signed.event.meta.causation_id
        assert cause is None or order.index(cause) < order.index(signed.event.meta.event_id)
    assert _types(store, "b1") == [e.event.meta.event_type for e in first]
    assert _types(store, "b2") == [e.event.meta.event_type for e in second]
    assert verify_incident(store, sample_incident_id("b1"), keys.registry).ok
    assert verify_incident(store, sample_incident_id("b2"), keys.registry).ok
    assert sink.appended == 12


def test_what_waits_for_a_cause_is_handed_back_and_appended_when_the_cause_comes(
    tmp_path: Path, keys: SampleKeys
) -> None:
    store = _store(tmp_path)
    now = [0.0]
    sink = LedgerSink(store, checkpoint=lambda: None, max_cause_wait_s=30, clock=lambda: now[0])
    chain = repaired_incident(keys, "w")

    outcome = sink.append_batch([chain[0], chain[2], chain[3], chain[5]])  # 2 missing: 3 and 4 wait, 6 waits for 5

    assert [s.event.meta.event_id for s, _ in outcome.appended] == [chain[0].event.meta.event_id]
    assert outcome.deferred == [chain[2], chain[3], chain[5]]
    again = sink.append_batch([chain[1], *outcome.deferred, chain[4]])
    assert again.deferred == []
    assert _types(store, "w") == [e.event.meta.event_type for e in chain]


def test_an_orphan_and_what_follows_it_are_appended_after_the_wait(tmp_path: Path, keys: SampleKeys) -> None:
    store = _store(tmp_path)
    now = [0.0]
    sink = LedgerSink(store, checkpoint=lambda: None, max_cause_wait_s=30, clock=lambda: now[0])
    chain = repaired_incident(keys, "o")
    late: list[SignedEvent] = chain[2:]

    assert sink.append_batch(late).deferred == late
    now[0] = 31.0
    outcome = sink.append_batch(late)

    assert outcome.deferred == [] and [s for s, _ in outcome.appended] == late
    assert not verify_incident(store, sample_incident_id("o"), keys.registry).ok  # the missing link is named


def test_a_batch_seals_one_checkpoint_when_it_crosses_the_count(tmp_path: Path, keys: SampleKeys) -> None:
    store = _store(tmp_path)
    now = [100.0]
    sealed: list[int] = []
    sink = LedgerSink(
        store, checkpoint=lambda: sealed.append(store.head_position()), checkpoint_every=5, clock=lambda: now[0]
    )
    first, second = repaired_incident(keys, "c1"), repaired_incident(keys, "c2")

    sink.append_batch(first[:2])  # the first append after a quiet interval
    now[0] = 101.0
    sink.append_batch(first[2:])  # 6 appended: past 5
    sink.append_batch(first)  # repeats only
    sink.append_batch(second[:3])  # 9: not past 10

    assert sealed == [2, 6]
