"""A consumer's fetches held between a fetch that found nothing and the next ring of its doorbell
(``libs/bus/doorbell.py``): for Tansu, which never answers a waiting fetch early.

The consumer's fetches go out with the shortest wait the broker honours (1 ms: Tansu answers a fetch of 0 ms
without looking at its storage at all). After a fetch that brought nothing, the next waits in the consumer until the
doorbell rings or ``wait_s`` (the stack's fetch wait) has passed, and only then goes to the broker, which finds the
record that was published before the ring. An idle consumer so sends one fetch per ``wait_s``, as before; a record
rung for is fetched about a round trip after its publisher had it acknowledged.

aiokafka 0.14 sends each fetch from a task of its fetcher (``Fetcher._proc_fetch_request``), one per broker at a
time; the gate wraps that coroutine on the consumer's own fetcher. The fetcher's internals are not aiokafka's public
API: where they are not as expected, nothing is changed and the consumer keeps its fetch wait (``gate_fetches``
returns why).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from libs.bus.doorbell import DoorbellReceiver

GATED_FETCH_WAIT_MS = 1
"""The broker-side wait of a gated consumer's fetches: the least Tansu looks at its storage for."""


class _Gate:
    def __init__(self, bell: DoorbellReceiver, wait_s: float, fetch: Callable[..., Awaitable[bool]]) -> None:
        self.bell, self.wait_s, self.fetch = bell, wait_s, fetch
        self.found = True
        """Whether the last fetch brought records (then the next goes at once: there may be more)."""
        self.rings_at_send = bell.rings
        self.held = 0
        """How many fetches waited for a ring or the wait (``held_fetches``)."""

    async def gated(self, assignment: Any, node_id: int, request: Any) -> bool:
        if not self.found:
            self.held += 1
            try:
                await self.bell.wait_past(self.rings_at_send, self.wait_s)
            except asyncio.CancelledError:  # closed, or the assignment changed: as aiokafka's own fetch answers
                return False
        self.rings_at_send = self.bell.rings  # a ring while this fetch is out lets the next one go at once
        self.found = await self.fetch(assignment, node_id, request)
        return self.found


def gate_fetches(consumer: Any, bell: DoorbellReceiver, wait_s: float) -> str | None:
    """Hold ``consumer``'s fetches for ``bell`` (at most ``wait_s`` each); None when done, else why not (the consumer
    is then left as it was)."""
    fetcher = getattr(consumer, "_fetcher", None)
    fetch = getattr(fetcher, "_proc_fetch_request", None)
    if fetcher is None or not callable(fetch) or not isinstance(getattr(fetcher, "_fetch_max_wait_ms", None), int):
        return "the consumer's fetcher is not aiokafka 0.14's (no _proc_fetch_request or _fetch_max_wait_ms)"
    if isinstance(getattr(fetch, "__self__", None), _Gate):
        return None  # gated already
    gate = _Gate(bell, wait_s, fetch)
    fetcher._proc_fetch_request = gate.gated
    fetcher._fetch_max_wait_ms = GATED_FETCH_WAIT_MS
    return None


def held_fetches(consumer: Any) -> int:
    """How many of ``consumer``'s fetches its gate held (0 when it has none)."""
    fetch = getattr(getattr(consumer, "_fetcher", None), "_proc_fetch_request", None)
    gate = getattr(fetch, "__self__", None)
    return gate.held if isinstance(gate, _Gate) else 0
