"""The fetch gate on a stand-in fetcher: a fetch after one that found records goes at once, one after an empty fetch
waits for a ring, a ring during a fetch lets the next go at once, a held fetch cancelled answers as aiokafka's own
does, gating twice wraps once, and a consumer that is not aiokafka's is left as it was with the reason."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from libs.bus.doorbell import DoorbellReceiver, Doorbells
from libs.bus.fetch_gate import GATED_FETCH_WAIT_MS, gate_fetches, held_fetches

pytestmark = pytest.mark.skipif(os.uname().sysname != "Linux", reason="abstract Unix sockets are Linux's")


class _Fetcher:
    def __init__(self, answers: list[bool]) -> None:
        self._fetch_max_wait_ms = 500
        self.answers = answers
        self.sent = 0
        self.ring_during: Doorbells | None = None

    async def _proc_fetch_request(self, assignment: Any, node_id: int, request: Any) -> bool:
        self.sent += 1
        if self.ring_during is not None:
            self.ring_during.ring("t")
            self.ring_during = None
            await asyncio.sleep(0.05)  # the ring is taken while this fetch is out
        return self.answers.pop(0)


class _Consumer:
    def __init__(self, fetcher: object) -> None:
        self._fetcher = fetcher


async def _sent_within(fetcher: _Fetcher, fetch: Any, seconds: float) -> bool:
    task = asyncio.ensure_future(fetch(None, 0, None))
    await asyncio.sleep(seconds)
    went = task.done()
    if not went:
        task.cancel()
        assert await task is False
    return went


def test_fetches_go_at_once_after_records_and_wait_for_a_ring_after_nothing(tmp_path: Path) -> None:
    async def scenario() -> None:
        bell = DoorbellReceiver(tmp_path, ["t"])
        bell.open()
        fetcher = _Fetcher([True, False, False])
        consumer = _Consumer(fetcher)
        try:
            assert gate_fetches(consumer, bell, 60.0) is None
            assert fetcher._fetch_max_wait_ms == GATED_FETCH_WAIT_MS
            fetch = fetcher._proc_fetch_request
            assert await fetch(None, 0, None) is True  # nothing before it: at once
            assert await fetch(None, 0, None) is False  # after records: at once
            assert held_fetches(consumer) == 0
            assert not await _sent_within(fetcher, fetch, 0.1)  # after nothing: held, cancelled while held
            assert fetcher.sent == 2 and held_fetches(consumer) == 1
            held = asyncio.ensure_future(fetch(None, 0, None))
            await asyncio.sleep(0.05)
            assert not held.done()
            Doorbells(tmp_path).ring("t")
            assert await asyncio.wait_for(held, 10) is False  # the ring let it go
            assert fetcher.sent == 3 and held_fetches(consumer) == 2
            assert not await _sent_within(fetcher, fetch, 0.1)  # that one found nothing too: the next is held
            assert fetcher.sent == 3
        finally:
            bell.close()

    asyncio.run(scenario())


def test_a_ring_while_a_fetch_is_out_lets_the_next_go_at_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        bell = DoorbellReceiver(tmp_path, ["t"])
        bell.open()
        fetcher = _Fetcher([False, False])
        consumer = _Consumer(fetcher)
        try:
            assert gate_fetches(consumer, bell, 60.0) is None
            fetcher.ring_during = Doorbells(tmp_path)
            assert await fetcher._proc_fetch_request(None, 0, None) is False
            assert await asyncio.wait_for(fetcher._proc_fetch_request(None, 0, None), 10) is False
            assert fetcher.sent == 2
        finally:
            bell.close()

    asyncio.run(scenario())


def test_gating_twice_wraps_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        bell = DoorbellReceiver(tmp_path, ["t"])
        bell.open()
        fetcher = _Fetcher([False])
        consumer = _Consumer(fetcher)
        try:
            assert gate_fetches(consumer, bell, 60.0) is None
            first = fetcher._proc_fetch_request
            assert gate_fetches(consumer, bell, 60.0) is None
            assert fetcher._proc_fetch_request == first
        finally:
            bell.close()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "consumer",
    [object(), _Consumer(object()), _Consumer(type("NoWait", (), {"_proc_fetch_request": lambda self: None})())],
)
def test_a_consumer_that_is_not_aiokafkas_is_left_as_it_was(tmp_path: Path, consumer: object) -> None:
    fetcher = getattr(consumer, "_fetcher", None)
    before = dict(vars(fetcher)) if fetcher is not None and hasattr(fetcher, "__dict__") else None

    why = gate_fetches(consumer, DoorbellReceiver(tmp_path, ["t"]), 1.0)

    assert why is not None and "aiokafka" in why
    if before is not None:
        assert vars(fetcher) == before
