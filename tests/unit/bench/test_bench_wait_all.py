"""The bench's wait for published incidents: it returns each published incident's verified events, leaves out one
still in progress, and reads an incident's events only when its head moved (not at every look)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import modelguard.bench as bench
from libs.ledger.store import LedgerStore
from modelguard.synthetic_incidents import SampleKeys, abstained_incident, repaired_incident


@pytest.fixture
def keys() -> SampleKeys:
    return SampleKeys.generate()


def _store(tmp_path: Path) -> LedgerStore:
    store = LedgerStore(f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    store.create_schema()
    return store


def test_published_incidents_come_back_whole_and_unfinished_ones_do_not(tmp_path: Path, keys: SampleKeys) -> None:
    store = _store(tmp_path)
    published = [repaired_incident(keys, f"wait-{i}") for i in range(3)]
    waiting = abstained_incident(keys, "wait-open")
    for events in [*published, waiting]:
        store.append_batch(events)
    wanted = [events[0].event.meta.incident_id for events in [*published, waiting]]

    done = bench.wait_all(store, keys.registry, wanted, timeout_s=0.5, poll_s=0.05)

    assert set(done) == set(wanted[:3])
    for events in published:
        got = done[events[0].event.meta.incident_id]
        assert [e.envelope_bytes for e in got] == [e.envelope_bytes for e in events]
        assert got[-1].event.meta.event_type == "Published"


def test_an_incident_is_read_again_only_after_its_head_moved(
    tmp_path: Path, keys: SampleKeys, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    events = repaired_incident(keys, "wait-moves")
    incident = events[0].event.meta.incident_id
    store.append_batch(events[:2])
    reads: list[int] = []
    real = bench.incident_events

    def counted(*args: Any) -> list[Any]:
        found = real(*args)
        reads.append(len(found))
        if len(reads) == 1:
            store.append_batch(events[2:])  # the rest arrives after the first read
        return found

    monkeypatch.setattr(bench, "incident_events", counted)
    looks: list[int] = []
    real_incidents = store.incidents

    def looked() -> list[Any]:
        looks.append(1)
        return real_incidents()

    monkeypatch.setattr(store, "incidents", looked)
    done = bench.wait_all(store, keys.registry, [incident, "never-reported"], timeout_s=0.6, poll_s=0.05)

    assert list(done) == [incident]
    assert reads == [2, len(events)]  # once at its first head, once after it moved: never on an unchanged head
    assert len(looks) > 3  # it went on looking for the incident that never came
