"""What a service's runtime does with a claim (libs/bus/runtime.py, SQLite state, no broker): it waits while
another live replica holds the input and re-sends that replica's outputs once it finished; it takes the input over
when the holder's lease runs out; and it renews its own claim while it works, so no one else takes it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from contracts.service_channels import SERVICE_CHANNELS
from libs.bus.processed_inputs import ProcessedInputs, Pruned
from libs.bus.runtime import ServiceDefinition, ServiceRuntime
from libs.events.codec import SignedEvent
from libs.settings import load_settings
from tests.support.running_stack import environment
from tests.support.sample_events import Keys, reported
from tests.support.waiting import until

ELSEWHERE = "diagnoser@another-host:1/4242/abcdef"


@dataclass
class Replica:
    runtime: ServiceRuntime
    published: list[bytes]
    """What this replica sent on the bus."""
    output: bytes
    """An envelope another replica recorded as its output."""


@pytest.fixture
def replica(tmp_path: Path) -> Iterator[Replica]:
    keys = Keys("diagnoser", "reporter")
    values = {
        "MODELGUARD_HOME": str(tmp_path / "home"),
        "MODELGUARD_STATE_URL": "sqlite",
        "MODELGUARD_CLAIM_LEASE_S": "0.6",
    }
    with environment(values):
        settings = load_settings()
    definition = ServiceDefinition("diagnoser", "test", SERVICE_CHANNELS["diagnoser"], sink=lambda event: None)
    runtime = ServiceRuntime(definition, settings, keys["diagnoser"], keys.registry)
    made = Replica(runtime, [], reported(keys).envelope_bytes)

    async def publish(sealed: SignedEvent) -> None:
        made.published.append(sealed.envelope_bytes)

    runtime._publish = publish  # type: ignore[method-assign]  # the bus, as seen by the test
    yield made
    runtime.processed.close()


def _another_replica(replica: Replica) -> ProcessedInputs:
    return ProcessedInputs.of(replica.runtime.state, "diagnoser")


def test_an_input_in_hand_elsewhere_is_waited_for_and_its_outputs_sent_again(replica: Replica) -> None:
    runtime, other = replica.runtime, _another_replica(replica)
    assert other.claim("e1", ELSEWHERE, lease_s=60) is None
    finishing = threading.Timer(1.0, lambda: other.mark("e1", [replica.output], owner=ELSEWHERE))
    finishing.start()
    started = time.monotonic()
    assert asyncio.run(runtime._claim("e1", "ContextCollected e1")) is False, "not handled here"
    assert time.monotonic() - started >= 0.9, "it waited for the holder"
    assert replica.published == [replica.output], "the holder's outputs, sent again"


def test_an_input_whose_holder_stopped_renewing_is_taken_over(replica: Replica) -> None:
    runtime, other = replica.runtime, _another_replica(replica)
    assert other.claim("e2", ELSEWHERE, lease_s=0.5) is None
    assert asyncio.run(runtime._claim("e2", "ContextCollected e2")) is True
    assert runtime.processed.renew("e2", runtime.replica, lease_s=60), "this replica holds it now"
    assert not other.renew("e2", ELSEWHERE, lease_s=60)
    assert replica.published == []


def test_a_claim_is_renewed_while_its_input_is_handled(replica: Replica) -> None:
    runtime, other = replica.runtime, _another_replica(replica)
    assert asyncio.run(runtime._claim("e3", "ContextCollected e3")) is True

    async def handle_for(seconds: float) -> list[bool]:
        keeping = asyncio.create_task(runtime._keep_claim("e3", "ContextCollected e3"))
        tries = []
        for _ in range(int(seconds / 0.3)):
            await asyncio.sleep(0.3)
            tries.append(await asyncio.to_thread(other.claim, "e3", ELSEWHERE, 60) is None)
        keeping.cancel()
        return tries

    assert asyncio.run(handle_for(1.8)) == [False] * 6, "three leases long, never free for another replica"
    time.sleep(0.8)
    assert other.claim("e3", ELSEWHERE, lease_s=60) is None, "once the renewals stop, the lease runs out"


def test_an_input_whose_outputs_were_pruned_is_neither_handled_again_nor_answered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    keys = Keys("validator", "reporter")
    with environment({"MODELGUARD_HOME": str(tmp_path / "home"), "MODELGUARD_STATE_URL": "sqlite"}):
        settings = load_settings()
    handled: list[str] = []
    channels = SERVICE_CHANNELS["detector"]
    definition = ServiceDefinition(
        "detector", "test", channels, sink=lambda event: handled.append(event.event.meta.event_id)
    )
    runtime = ServiceRuntime(definition, settings, keys["validator"], keys.registry)
    published: list[bytes] = []

    async def publish(sealed: SignedEvent) -> None:
        published.append(sealed.envelope_bytes)

    runtime._publish = publish  # type: ignore[method-assign]
    event = reported(keys)
    try:
        runtime.processed.mark(event.event.meta.event_id, [b'{"an":"output"}'], owner=runtime.replica)
        runtime.processed._tables.run("UPDATE {claims} SET lease_until = lease_until - 1e8")  # years ago

        async def prune_once() -> None:
            pruning = asyncio.create_task(runtime._prune_outputs_forever())
            try:
                assert await until(lambda: runtime.processed.outputs_of(event.event.meta.event_id) == Pruned(), 30)
            finally:
                pruning.cancel()

        asyncio.run(prune_once())
        record = SimpleNamespace(
            topic="modelguard.evaluation-reported.v2", partition=0, offset=9, value=event.envelope_bytes, key=None
        )
        with caplog.at_level("WARNING", logger="modelguard.bus"):
            asyncio.run(runtime.on_message(SimpleNamespace(raw_message=record, consumer=None, body=b"")))  # type: ignore[arg-type]
        assert handled == [] and published == []
        assert "its outputs are no longer kept" in caplog.text
    finally:
        runtime.processed.close()
