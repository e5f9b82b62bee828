"""Kafka in one process: topics with offsets, consumer groups with committed offsets, and clients that answer the
calls FastStream makes on aiokafka's producer, consumer and admin client (``libs/bus/in_memory_clients.py``), so that
a service's runtime (``libs/bus/runtime.py``) and FastStream above it run over it unchanged
(``libs/bus/in_memory_broker.py``): FastStream encodes and publishes,
consumes in its own loop, acknowledges by committing and rewinds by seeking, exactly as against a broker.

FastStream's ``TestKafkaBroker`` (``faststream/kafka/testing.py``) is the model, with one difference that matters
for a pipeline: ``TestKafkaBroker`` calls the consuming handler inside ``publish`` (depth first, the handler's
exception raised to the publisher, no offsets, nothing read again), where here every record is appended to its
topic's log and each consumer reads its group's position in a task of its own, as aiokafka's consumer does: a
record not acknowledged (``NACK_ON_ERROR``: a seek back to it) is read again, a committed one is not, and a record
larger than the producer's ``max_request_size`` is refused with aiokafka's own size estimate and error.

What it leaves out, on purpose: one partition per topic (records of one incident keep their order, as its key
keeps them on one partition of a broker); a consumer subscribed to several topics reads their records in the order
they were appended (one of the orders a broker may hand out); no rebalancing (a group's consumers do not share its
partitions: each reads all of them), no retention, no transactions, no compression.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import ConsumerRecord, TopicPartition
from aiokafka.errors import IllegalStateError
from aiokafka.structs import RecordMetadata

from libs.bus.in_memory_clients import PARTITION, InMemoryAdmin, InMemoryConsumer, InMemoryProducer

CREATE_TIME = 0
"""``timestamp_type`` of a record stamped by its producer."""

RecordObserver = Callable[[Any], None]
"""Told of every record appended (an aiokafka ``ConsumerRecord``), in the order of the appends."""


@dataclass(frozen=True)
class _Stored:
    sequence: int
    """Across all topics: the order the records were appended in."""
    record: Any


class InMemoryKafka:
    """The cluster: every topic's log, every group's committed offsets, and the consumers reading now.

    Made and used inside one running event loop (its consumers wait on asyncio events)."""

    def __init__(self, observe: RecordObserver | None = None) -> None:
        self._logs: dict[str, list[_Stored]] = {}
        self._appended = 0
        self._committed: dict[tuple[str, str], int] = {}
        self._consumers: list[InMemoryConsumer] = []
        self._observe = observe
        self._records_changed = asyncio.Event()
        """Set (and replaced) when there may be something new to read: an append, a seek, a resume, a stop."""
        self._consumers_changed = asyncio.Event()
        """Set (and replaced) when a consumer starts waiting, starts or stops: what ``settled`` waits on."""

    # clients, as FastStream's Kafka broker makes them (``libs/bus/in_memory_broker.py``)

    def producer(self, **options: Any) -> InMemoryProducer:
        return InMemoryProducer(self, **options)

    def consumer(self, *topics: str, **options: Any) -> InMemoryConsumer:
        consumer = InMemoryConsumer(self, **options)
        if topics:
            consumer.subscribe(topics)
        return consumer

    def admin(self, **options: Any) -> InMemoryAdmin:
        return InMemoryAdmin(self)

    # the log

    def create_topic(self, topic: str) -> bool:
        """True when the topic is new."""
        if topic in self._logs:
            return False
        self._logs[topic] = []
        return True

    def topics(self) -> list[str]:
        return sorted(self._logs)

    def records(self, topic: str) -> list[Any]:
        """The topic's records (aiokafka ``ConsumerRecord``), offset 0 first."""
        return [stored.record for stored in self._logs.get(topic, [])]

    def all_records(self) -> list[Any]:
        """Every record of every topic, in the order they were appended."""
        stored = sorted((s for log in self._logs.values() for s in log), key=lambda s: s.sequence)
        return [s.record for s in stored]

    def end_offset(self, topic: str) -> int:
        return len(self._logs.get(topic, []))

    def append(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: Sequence[tuple[str, bytes]] = (),
        timestamp_ms: int | None = None,
    ) -> Any:
        """Append one record at the end of the topic (made if it is new); its ``RecordMetadata``."""
        log = self._logs.setdefault(topic, [])
        timestamp = timestamp_ms if timestamp_ms is not None else int(time.time() * 1000)
        record = ConsumerRecord(
            topic=topic,
            partition=PARTITION,
            offset=len(log),
            timestamp=timestamp,
            timestamp_type=CREATE_TIME,
            key=key,
            value=value,
            checksum=None,
            serialized_key_size=-1 if key is None else len(key),
            serialized_value_size=-1 if value is None else len(value),
            headers=tuple(headers),
        )
        self._appended += 1
        log.append(_Stored(self._appended, record))
        if self._observe is not None:
            self._observe(record)
        self.records_changed()
        partition = TopicPartition(topic, PARTITION)
        return RecordMetadata(topic, PARTITION, partition, record.offset, timestamp, CREATE_TIME, 0)

    def stored_from(self, topic: str, offset: int) -> list[_Stored]:
        return self._logs.get(topic, [])[offset:]

    # consumer groups

    def committed(self, group: str | None, partition: Any) -> int | None:
        if group is None:
            return None
        return self._committed.get((group, partition.topic))

    def commit(self, group: str | None, partition: Any, offset: int) -> None:
        if group is None:
            raise IllegalStateError("a consumer without a group_id commits no offsets")
        self._committed[(group, partition.topic)] = offset

    # waiting

    def records_changed(self) -> None:
        changed, self._records_changed = self._records_changed, asyncio.Event()
        changed.set()

    def consumers_changed(self) -> None:
        changed, self._consumers_changed = self._consumers_changed, asyncio.Event()
        changed.set()

    async def wait_for_records(self, timeout_s: float | None) -> None:
        """Until something may be new to read, or ``timeout_s`` (None: no limit)."""
        changed = self._records_changed
        try:
            await asyncio.wait_for(changed.wait(), timeout_s)
        except TimeoutError:
            return

    def joined(self, consumer: InMemoryConsumer) -> None:
        self._consumers.append(consumer)
        self.consumers_changed()

    def left(self, consumer: InMemoryConsumer) -> None:
        if consumer in self._consumers:
            self._consumers.remove(consumer)
        self.records_changed()  # a consumer waiting for records raises ConsumerStoppedError
        self.consumers_changed()

    def is_settled(self) -> bool:
        """Every consumer is waiting for records and has none to read: nothing is in hand anywhere."""
        return all(c.waiting and not c.has_records() for c in self._consumers)

    async def settled(self) -> None:
        """Until every consumer has read everything it can and handled it (a handler that publishes appends its
        records before its consumer asks for the next one, so nothing that follows from them is missed)."""
        while not self.is_settled():
            changed = self._consumers_changed
            await changed.wait()
