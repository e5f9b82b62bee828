"""A service's timer ticks again after a failing tick: one bad tick never stops the ledger's checkpoints."""

from __future__ import annotations

import asyncio

from libs.bus.runtime import Timer, _run_timer


def test_a_failing_tick_is_logged_and_the_timer_ticks_again() -> None:
    calls: list[int] = []

    async def run() -> None:
        loop, ticked_twice = asyncio.get_running_loop(), asyncio.Event()

        def tick() -> None:
            calls.append(len(calls))
            if len(calls) == 1:
                raise RuntimeError("the database is away")
            loop.call_soon_threadsafe(ticked_twice.set)

        task = asyncio.create_task(_run_timer(Timer("checkpoint", 0.01, tick)))
        try:
            await asyncio.wait_for(ticked_twice.wait(), timeout=60)
        finally:
            task.cancel()

    asyncio.run(run())

    assert calls[:2] == [0, 1]
