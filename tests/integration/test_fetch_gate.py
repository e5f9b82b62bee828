"""A consumer whose fetches wait for its doorbell, on a real broker: a ring lets the next fetch go long before its
wait ends, a record nobody rang for still comes once the wait has passed, and a consumer stops cleanly while its
fetch is held. A stack's services register their doorbells for the topics they read and unregister on the way down.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from contracts.registry import contract_for
from libs.bus.doorbell import DoorbellReceiver, Doorbells
from libs.bus.fetch_gate import GATED_FETCH_WAIT_MS, gate_fetches, held_fetches
from tests.support.broker import kafka_broker
from tests.support.running_stack import running_stack

pytestmark = pytest.mark.broker

LONG_WAIT_S = 120.0
"""A gate's wait no test here waits out: a record that comes before it came by the ring."""


async def _until(condition: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        await asyncio.sleep(0.01)


async def _with_gated_consumer(
    bootstrap: str, folder: Path, wait_s: float, body: Callable[..., Awaitable[None]]
) -> None:
    topic = f"gate-{uuid.uuid4().hex[:10]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name=topic, num_partitions=1, replication_factor=1)])
    finally:
        await admin.close()
    bell = DoorbellReceiver(folder, [topic])
    bell.open()
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, group_id=f"{topic}-g", auto_offset_reset="earliest", fetch_max_wait_ms=500
    )
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await consumer.start()
    await producer.start()
    try:
        assert gate_fetches(consumer, bell, wait_s) is None
        assert consumer._fetcher._fetch_max_wait_ms == GATED_FETCH_WAIT_MS
        await body(topic, consumer, producer, bell)
    finally:
        await producer.stop()
        await consumer.stop()
        bell.close()


def test_a_ring_lets_a_held_fetch_go_and_the_record_comes_long_before_the_wait(tmp_path: Path) -> None:
    async def body(topic: str, consumer: AIOKafkaConsumer, producer: AIOKafkaProducer, bell: DoorbellReceiver) -> None:
        bells = Doorbells(tmp_path / "bells")
        reading = asyncio.ensure_future(consumer.getone())
        await _until(lambda: held_fetches(consumer) >= 1, 60)  # the group joined, a fetch found nothing: held
        for n in range(3):
            held = held_fetches(consumer)  # a fetch is held now: the record is sent while it waits
            await producer.send_and_wait(topic, f"record {n}".encode())
            assert bells.ring(topic) == 1
            record = await asyncio.wait_for(reading, LONG_WAIT_S / 2)
            assert record.value == f"record {n}".encode()
            reading = asyncio.ensure_future(consumer.getone())
            await _until(lambda held=held: held_fetches(consumer) > held, 60)  # the next empty fetch is held again
        reading.cancel()
        bells.close()

    with kafka_broker(tmp_path) as bootstrap:
        asyncio.run(_with_gated_consumer(bootstrap, tmp_path / "bells", LONG_WAIT_S, body))


def test_a_record_nobody_rang_for_comes_once_the_wait_has_passed(tmp_path: Path) -> None:
    async def body(topic: str, consumer: AIOKafkaConsumer, producer: AIOKafkaProducer, bell: DoorbellReceiver) -> None:
        reading = asyncio.ensure_future(consumer.getone())
        await _until(lambda: held_fetches(consumer) >= 1, 60)
        await producer.send_and_wait(topic, b"unannounced")
        record = await asyncio.wait_for(reading, 60)
        assert record.value == b"unannounced"
        assert bell.rings == 0

    with kafka_broker(tmp_path) as bootstrap:
        asyncio.run(_with_gated_consumer(bootstrap, tmp_path / "bells", 0.3, body))


def test_a_consumer_whose_fetch_is_held_stops_cleanly(tmp_path: Path) -> None:
    async def body(topic: str, consumer: AIOKafkaConsumer, producer: AIOKafkaProducer, bell: DoorbellReceiver) -> None:
        reading = asyncio.ensure_future(consumer.getone())
        await _until(lambda: held_fetches(consumer) >= 1, 60)
        reading.cancel()
        await asyncio.wait_for(consumer.stop(), 30)  # not the gate's two minutes

    with kafka_broker(tmp_path) as bootstrap:
        asyncio.run(_with_gated_consumer(bootstrap, tmp_path / "bells", LONG_WAIT_S, body))


def test_the_stacks_services_register_for_what_they_read_and_unregister_going_down(tmp_path: Path) -> None:
    detector_input = contract_for("EvaluationReported").topic
    with running_stack(tmp_path / "home", services=("ledger", "detector")) as stack:
        folder = stack.settings.run_dir / "doorbells"
        registered = {p.parent.name for p in folder.glob("*/*")}
        assert detector_input in registered
        assert len(list((folder / detector_input).iterdir())) == 1  # the detector; the ledger keeps its polls
        log = stack.settings.home / "logs" / "detector.log"
        deadline = time.monotonic() + 60  # ready is said a moment before the line is written
        while "its input's fetches wait for its doorbell" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        logged = log.read_text()
        assert "its input's fetches wait for its doorbell" in logged and "not gated" not in logged
    assert list(folder.glob("*/*")) == []
