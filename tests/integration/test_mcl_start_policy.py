"""Where a consumer of DataHub's topics starts on its first run, over the real broker: from the end (the
default: DataHub's retained history is not new risk), from the first record no older than a duration, or from
the beginning. The first position is committed at once, so a restart before any record arrives does not skip
what came in between."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from faststream.kafka import KafkaBroker

from libs.bus.resume_listener import ResumeFromStoredOffsets
from libs.bus.start_policy import StartPolicy, parse_start_policy
from libs.bus.topics import ensure_topics
from tests.support.broker import kafka_broker
from tests.support.waiting import until

pytestmark = pytest.mark.broker

DAY_MS = 86_400_000


async def _committed(bootstrap: str, group: str, partition: TopicPartition) -> int | None:
    probe = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await probe.start()
    try:
        return await probe.committed(partition)
    finally:
        await probe.stop()


async def _produce(bootstrap: str, topic: str, records: list[tuple[bytes, int]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for value, timestamp_ms in records:
            await producer.send_and_wait(topic, value, partition=0, timestamp_ms=timestamp_ms)
    finally:
        await producer.stop()


class Reader:
    """A FastStream subscriber in a group, with the runtime's listener, collecting what it reads."""

    def __init__(self, bootstrap: str, topic: str, group: str, start: StartPolicy) -> None:
        self.records: list[bytes] = []
        self.broker = KafkaBroker(bootstrap)
        self.listener = ResumeFromStoredOffsets(
            dict, start=start, probe=lambda: AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        )
        subscriber = self.broker.subscriber(topic, group_id=group, auto_offset_reset="earliest", listener=self.listener)
        self.listener.subscriber = subscriber

        @subscriber
        async def collect(body: bytes) -> None:
            self.records.append(body)

    @property
    def read(self) -> list[bytes]:
        """What it read, each record once (delivery is at least once: a rebalance may hand a record again)."""
        return list(dict.fromkeys(self.records))

    async def __aenter__(self) -> Reader:
        await self.broker.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.broker.stop()


@pytest.mark.timeout(300)
def test_each_start_policy_starts_where_it_says_and_a_restart_resumes_from_the_first_choice(tmp_path: Path) -> None:
    topic = f"mcl-start-{time.monotonic_ns()}"
    partition = TopicPartition(topic, 0)
    now_ms = int(time.time() * 1000)

    async def scenario(bootstrap: str) -> None:
        await ensure_topics(bootstrap, [topic], 1)
        history = [(b"three-days-old", now_ms - 3 * DAY_MS), (b"an-hour-old", now_ms - 3_600_000)]
        await _produce(bootstrap, topic, history)

        async with Reader(bootstrap, topic, "from-the-end", parse_start_policy("latest")) as latest:
            # the first position is committed before anything is read: the end of the history
            committed: list[int | None] = [None]

            async def poll() -> None:
                committed[0] = await _committed(bootstrap, "from-the-end", partition)

            deadline = time.monotonic() + 60
            while committed[0] is None and time.monotonic() < deadline:
                await poll()
                await asyncio.sleep(0.5)
            assert committed[0] == 2, committed
        assert latest.read == []  # history was not read as new

        await _produce(bootstrap, topic, [(b"while-it-was-down", now_ms)])
        async with Reader(bootstrap, topic, "from-the-end", parse_start_policy("latest")) as restarted:
            assert await until(lambda: restarted.read == [b"while-it-was-down"], 60), restarted.read

        async with Reader(bootstrap, topic, "a-day-back", parse_start_policy("1d")) as day:
            assert await until(lambda: day.read == [b"an-hour-old", b"while-it-was-down"], 60), day.read

        async with Reader(bootstrap, topic, "everything", parse_start_policy("earliest")) as everything:
            expected = [b"three-days-old", b"an-hour-old", b"while-it-was-down"]
            assert await until(lambda: everything.read == expected, 60), everything.read

    with kafka_broker(tmp_path) as bootstrap:
        asyncio.run(scenario(bootstrap))
