"""The broker's own share of a hop: how long a record waits for a consumer that is already waiting for it, apart from
any service's work. `modelguard bench pipeline` prints it beside the overhead it splits, so that the part of each
hop the broker takes reads apart from ModelGuard's.

Kafka wakes a waiting fetch when a record arrives. The embedded broker (Tansu 0.6) does not: a fetch looks at its
storage when it arrives and, finding nothing, sleeps the rest of its wait (the whole of it under 250 ms) and answers
empty, so a record published to a consumer whose fetch is already waiting is read by the fetch after it. Measured on
a 2-core machine with one waiting aiokafka consumer: 19.6 ms p50, 44 ms at most at a 100 ms fetch wait; 7.9 and
25 ms at 50; 33 and 97 ms at 200; alike on one partition and three. (A consumer that fetches only after the record
was published gets it in about 2 ms: which is why a probe that sends and then reads shows no wait at all.) The
stack's services hold their fetches for a ring of their doorbell instead (``libs/bus/doorbell.py``); given a
doorbells folder, the probe's consumer does too and each send is rung: 1.6 ms p50, 2.1 ms p95 in process.

The probe publishes to a topic of its own, one record at a time, each after a pause long enough for the consumer's
fetch to be waiting again, the pauses spread over the fetch wait so that records land at every point of the broker's
looks; it times each from just before its send to the consumer having it, and removes its topic afterwards.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from libs.bus.doorbell import DoorbellReceiver, Doorbells
from libs.bus.fetch_gate import gate_fetches
from libs.bus.kafka_connection import KafkaConnection, connection_to
from modelguard.percentiles import percentile

RECORDS = 24
SETTLE_S = 0.02
"""The least pause before a record: the consumer has taken the previous one and its next fetch is out."""


class ProbeFailed(RuntimeError):
    """The consumer got something other than the record just sent, or nothing in time."""


@dataclass(frozen=True)
class HopLatencies:
    fetch_wait_ms: int
    seconds: list[float]
    """Per record, in the order sent: from just before its send to the waiting consumer having it."""
    rung: bool = False
    """The consumer's fetches waited for its doorbell, rung after each send (the services' way on a broker the stack
    owns, ``libs/bus/doorbell.py``)."""

    def line(self) -> str:
        ms = [1000 * s for s in self.seconds]
        waiting = "waiting for its doorbell" if self.rung else "waiting"
        return (
            f"the broker's own share of a hop (a consumer already {waiting}, fetch wait {self.fetch_wait_ms} ms, "
            f"{len(ms)} records): p50 {percentile(ms, 0.5):.1f} ms, p95 {percentile(ms, 0.95):.1f} ms, "
            f"most {max(ms):.1f} ms"
        )


async def hop_latencies(
    target: KafkaConnection | str,
    fetch_wait_ms: int,
    records: int = RECORDS,
    seed: int = 0,
    doorbells: Path | None = None,
) -> HopLatencies:
    """Publish ``records`` records, one at a time, to a consumer of ``target`` already waiting with ``fetch_wait_ms``
    (for a doorbell registered in ``doorbells``, rung after each send, when given); each one's wait. Raises
    ProbeFailed when a record does not come back as sent within ten fetch waits."""
    connection = connection_to(target)
    topic = f"modelguard.probe.hop-{uuid.uuid4().hex[:12]}"
    admin = AIOKafkaAdminClient(**connection.client_options())
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name=topic, num_partitions=1, replication_factor=1)])
        try:
            waits = await _timed(connection, topic, fetch_wait_ms, records, seed, doorbells)
            return HopLatencies(fetch_wait_ms, waits, rung=doorbells is not None)
        finally:
            await admin.delete_topics([topic])
    finally:
        await admin.close()


async def _timed(
    connection: KafkaConnection, topic: str, fetch_wait_ms: int, records: int, seed: int, doorbells: Path | None
) -> list[float]:
    bell = DoorbellReceiver(doorbells, [topic]) if doorbells is not None else None
    if bell is not None:
        bell.open()
    try:
        return await _timed_on(connection, topic, fetch_wait_ms, records, seed, bell)
    finally:
        if bell is not None:
            bell.close()


async def _timed_on(
    connection: KafkaConnection,
    topic: str,
    fetch_wait_ms: int,
    records: int,
    seed: int,
    bell: DoorbellReceiver | None,
) -> list[float]:
    consumer = AIOKafkaConsumer(
        topic,
        **connection.client_options(),
        group_id=f"{topic}-reader",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait_ms=fetch_wait_ms,
    )
    producer = AIOKafkaProducer(**connection.client_options())
    await consumer.start()
    try:
        if bell is not None and (why_not := gate_fetches(consumer, bell, fetch_wait_ms / 1000)) is not None:
            raise ProbeFailed(f"the probe's consumer could not wait for its doorbell: {why_not}")
        await producer.start()
        try:
            received: asyncio.Queue[tuple[bytes, float]] = asyncio.Queue()
            reading = asyncio.create_task(_read(consumer, received))
            ring = Doorbells(bell.folder if bell is not None else None)
            try:
                return await _send_each(producer, topic, received, fetch_wait_ms, records, seed, ring)
            finally:
                reading.cancel()
                ring.close()
        finally:
            await producer.stop()
    finally:
        await consumer.stop()


async def _read(consumer: AIOKafkaConsumer, received: asyncio.Queue[tuple[bytes, float]]) -> None:
    while True:
        record = await consumer.getone()
        received.put_nowait((record.value or b"", time.perf_counter()))


async def _send_each(
    producer: AIOKafkaProducer,
    topic: str,
    received: asyncio.Queue[tuple[bytes, float]],
    fetch_wait_ms: int,
    records: int,
    seed: int,
    ring: Doorbells,
) -> list[float]:
    spread = random.Random(seed)
    patience_s = 10 * fetch_wait_ms / 1000 + 5.0
    await _round_trip(producer, topic, received, b"warm-up", patience_s, ring)  # the group joined, the first fetch out
    waits: list[float] = []
    for n in range(records):
        await asyncio.sleep(SETTLE_S + spread.uniform(0.0, fetch_wait_ms / 1000))
        waits.append(await _round_trip(producer, topic, received, str(n).encode(), patience_s, ring))
    return waits


async def _round_trip(
    producer: AIOKafkaProducer,
    topic: str,
    received: asyncio.Queue[tuple[bytes, float]],
    value: bytes,
    patience_s: float,
    ring: Doorbells,
) -> float:
    sent = time.perf_counter()
    await producer.send_and_wait(topic, value)
    ring.ring(topic)
    try:
        got, at = await asyncio.wait_for(received.get(), patience_s)
    except TimeoutError:
        raise ProbeFailed(f"the probe's record {value!r} did not come back within {patience_s:.0f} s") from None
    if got != value:
        raise ProbeFailed(f"the probe sent {value!r} and its consumer got {got[:40]!r}")
    return at - sent
