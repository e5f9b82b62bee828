"""Reading what services wrote to a topic, for assertions."""

from __future__ import annotations

import asyncio
import time

from aiokafka import AIOKafkaConsumer, ConsumerRecord


async def _read(bootstrap: str, topic: str, expected: int, timeout_s: float) -> list[ConsumerRecord]:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None)
    await consumer.start()
    records: list[ConsumerRecord] = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(records) < expected and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=200)
            for partition_records in batch.values():
                records.extend(partition_records)
    finally:
        await consumer.stop()
    return records


def read_topic(bootstrap: str, topic: str, expected: int, timeout_s: float = 60.0) -> list[ConsumerRecord]:
    """At least `expected` records (or what arrived before the timeout)."""
    return asyncio.run(_read(bootstrap, topic, expected, timeout_s))
