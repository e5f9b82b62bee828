"""Several appenders on one incident, in threads and in processes: one unbroken chain, each event once."""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore, verify_incident
from tests.support.sample_events import SampleKeys, independent_events, sample_incident_id

APPENDERS, OWN, SHARED = 3, 5, 2


def _batches(keys: SampleKeys, name: str) -> tuple[list[list[SignedEvent]], int]:
    """Each appender gets its own events plus the same shared ones, which they race to append."""
    events = independent_events(keys, name, APPENDERS * OWN + SHARED)
    shared = events[-SHARED:]
    batches = [[*shared, *events[i * OWN : (i + 1) * OWN], *shared] for i in range(APPENDERS)]
    return batches, len(events)


def _append_all(url: str, events: list[SignedEvent], start: Any) -> int:
    with LedgerStore(url) as store:
        start.wait(timeout=20)
        return sum(store.append(e).appended for e in events)


def _append_in_child(url: str, events: list[SignedEvent], start: Any, results: Any) -> None:
    results.put(_append_all(url, events, start))


def _assert_one_chain(store: LedgerStore, keys: SampleKeys, name: str, expected: int) -> None:
    rows = store.incident_events(sample_incident_id(name))
    assert [r.sequence for r in rows] == list(range(1, expected + 1))
    assert len({r.event_id for r in rows}) == expected
    report = verify_incident(store, sample_incident_id(name), keys.registry)
    assert report.ok, report.problems


def test_threads_appending_to_one_incident_keep_one_chain(store: LedgerStore, keys: SampleKeys) -> None:
    batches, expected = _batches(keys, "threads")
    start = threading.Barrier(APPENDERS)

    with ThreadPoolExecutor(APPENDERS) as pool:
        appended = list(pool.map(lambda batch: _append_all(store.url, batch, start), batches))

    assert sum(appended) == expected
    _assert_one_chain(store, keys, "threads", expected)


def test_processes_appending_to_one_incident_keep_one_chain(store: LedgerStore, keys: SampleKeys) -> None:
    batches, expected = _batches(keys, "processes")
    context = multiprocessing.get_context("fork")  # children build their own store; nothing is pickled
    start, results = context.Barrier(APPENDERS), context.Queue()
    children = [context.Process(target=_append_in_child, args=(store.url, batch, start, results)) for batch in batches]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=60)
    appended = [results.get(timeout=1) for c in children if c.exitcode == 0]

    assert [c.exitcode for c in children] == [0] * APPENDERS
    assert sum(appended) == expected
    _assert_one_chain(store, keys, "processes", expected)
