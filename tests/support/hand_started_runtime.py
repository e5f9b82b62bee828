"""A `ServiceRuntime` a test starts by hand over embedded brokers it starts itself: stopped as the service stops,
and every broker stopped whatever the scenario did."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from libs.bus.embedded_broker import EmbeddedBroker
from libs.bus.runtime import ServiceRuntime


async def stop_runtime(runtime: ServiceRuntime) -> None:
    """What the service does going down, then its connections (the bus and DataHub's Kafka) and its state."""
    await runtime._going_down()
    for broker in runtime.brokers:
        await broker.stop()
    await runtime._commits_ended()
    runtime.processed.close()


def run_over_brokers(scenario: Callable[[], Coroutine[Any, Any, None]], brokers: Sequence[EmbeddedBroker]) -> None:
    """Run ``scenario``; then stop every broker in ``brokers``, which the scenario may add to as it starts them."""
    try:
        asyncio.run(scenario())
    finally:
        for broker in brokers:
            broker.stop()
