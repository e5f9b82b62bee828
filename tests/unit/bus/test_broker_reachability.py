"""The reachability watch: one line when the broker goes, one when it comes back, consumers stopped and started
once each, probes on a growing backoff in between."""

from __future__ import annotations

import asyncio
import logging

import pytest

from libs.backoff import Backoff
from libs.bus.broker_reachability import Reachability, bootstrap_addresses, watch_reachability


def test_bootstrap_addresses_are_parsed_and_a_bad_one_is_named() -> None:
    assert bootstrap_addresses("kafka-0:9092, PLAINTEXT://kafka-1:9093,[::1]:9094") == [
        ("kafka-0", 9092),
        ("kafka-1", 9093),
        ("::1", 9094),
    ]
    with pytest.raises(ValueError, match="'kafka-0' is not host:port"):
        bootstrap_addresses("kafka-0")


def test_two_failed_probes_make_the_broker_unreachable_and_the_waits_grow_to_the_cap() -> None:
    state = Reachability(Backoff(base_s=1.0, cap_s=8.0, jitter=0.0))
    assert state.failed(now=0.0) is False  # one refused connection may be a blip
    assert state.failed(now=1.0) is True
    waits = [state.next_probe_s(draw=0.0)]
    for t in range(2, 7):
        assert state.failed(now=float(t)) is False  # said once, not again
        waits.append(state.next_probe_s(draw=0.0))
    assert waits == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert state.answered(now=31.0) == 30.0
    assert state.unreachable is False and state.answered(now=32.0) is None


def test_a_blip_answered_before_it_is_confirmed_changes_nothing() -> None:
    state = Reachability()
    state.failed(now=0.0)
    assert state.answered(now=1.0) is None
    assert state.failed(now=2.0) is False  # the count started again


def _scripted(answers: list[str | None]):  # type: ignore[no-untyped-def]
    """A probe that answers from a script, then keeps connecting."""
    script = iter(answers)

    async def probe_once(addresses: list[tuple[str, int]]) -> str | None:
        return next(script, None)

    return probe_once


def _run(answers: list[str | None], resume_fails: int = 0) -> tuple[list[str], list[bool]]:
    calls: list[str] = []
    ready: list[bool] = []
    failures = [resume_fails]

    async def pause() -> None:
        calls.append("pause")

    async def resume() -> None:
        calls.append("resume")
        if failures[0]:
            failures[0] -= 1
            raise ConnectionError("the broker went again")

    async def scenario() -> None:
        watch = watch_reachability(
            "127.0.0.1:1",
            "svc",
            pause,
            resume,
            ready.append,
            every_s=0.001,
            backoff=Backoff(base_s=0.001, cap_s=0.004),
            probe_once=_scripted(answers),
        )
        task = asyncio.create_task(watch)
        await asyncio.sleep(0.3)
        task.cancel()

    asyncio.run(scenario())
    return calls, ready


def test_an_outage_stops_the_consumers_once_and_starts_them_once_with_one_line_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="modelguard.bus")
    refused = "127.0.0.1:1: [Errno 111] Connect call failed"
    calls, ready = _run([None, refused, refused, refused, refused, refused, None])
    assert calls == ["pause", "resume"]
    assert ready == [False, True]
    lines = [r.getMessage() for r in caplog.records if r.name == "modelguard.bus"]
    assert len(lines) == 2, lines
    assert lines[0].startswith("svc: broker 127.0.0.1:1 unreachable (127.0.0.1:1: [Errno 111]")
    assert "reachable again after" in lines[1] and "(5 probes failed)" in lines[1]


def test_consumers_that_cannot_start_send_the_watch_back_to_probing() -> None:
    calls, ready = _run(["x", "x", None], resume_fails=1)
    assert calls == ["pause", "resume", "pause", "resume"]
    assert ready == [False, True]
