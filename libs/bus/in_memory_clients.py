"""The client calls FastStream (and ``libs/bus/resume_listener.py``) make on aiokafka's producer, consumer and admin
client, answered by an in-memory cluster (``libs/bus/in_memory_kafka.py``): what a producer sends is appended at
once, a consumer reads its group's position and waits for records, a seek moves it back, a commit records it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiokafka import TopicPartition
from aiokafka.errors import ConsumerStoppedError, IllegalStateError, MessageSizeTooLargeError, ProducerClosed
from aiokafka.record.default_records import DefaultRecordBatchBuilder

if TYPE_CHECKING:
    from libs.bus.in_memory_kafka import InMemoryKafka

PARTITION = 0
"""The one partition of every topic."""
TOPIC_ALREADY_EXISTS = 36
"""Kafka's error code; FastStream's admin service counts it as success."""
DEFAULT_MAX_REQUEST_SIZE = 1048576
"""aiokafka's producer default."""


class InMemoryProducer:
    """The calls FastStream's Kafka producer makes on ``aiokafka.AIOKafkaProducer``; ``send`` appends at once."""

    def __init__(self, cluster: InMemoryKafka, *, max_request_size: int = DEFAULT_MAX_REQUEST_SIZE, **options: Any):
        self._cluster = cluster
        self._max_request_size = max_request_size
        self._closed = False  # read by FastStream (``RealProducer.closed``)

    async def start(self) -> None:
        self._closed = False

    async def stop(self) -> None:
        self._closed = True

    async def flush(self) -> None:
        """Nothing is buffered: every ``send`` appended its record."""

    async def send(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Iterable[tuple[str, bytes]] | None = None,
    ) -> asyncio.Future[Any]:
        """Append the record; a future already holding its ``RecordMetadata``, as aiokafka's ``send`` returns one."""
        if self._closed:
            raise ProducerClosed()
        if value is None and key is None:
            raise ValueError("a record needs a key or a value")
        header_list = list(headers or ())
        size = DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, header_list)
        if size > self._max_request_size:
            raise MessageSizeTooLargeError(
                f"The message is {size} bytes when serialized which is larger than the maximum request size you "
                "have configured with the max_request_size configuration"
            )
        if partition not in (None, PARTITION):
            raise ValueError(f"{topic} has one partition ({PARTITION}), not {partition}")
        sent: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        sent.set_result(self._cluster.append(topic, value, key, header_list, timestamp_ms))
        return sent

    async def send_and_wait(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Iterable[tuple[str, bytes]] | None = None,
    ) -> Any:
        return await (await self.send(topic, value, key, partition, timestamp_ms, headers))


@dataclass(frozen=True)
class _Member:
    """What FastStream's rebalance logging reads off ``consumer._coordinator``."""

    member_id: str


@dataclass(frozen=True)
class _Subscription:
    """What FastStream's rebalance logging reads off ``consumer._subscription``."""

    topics: frozenset[str]


class InMemoryConsumer:
    """The calls FastStream's Kafka subscriber (and ``libs/bus/resume_listener.py``) make on
    ``aiokafka.AIOKafkaConsumer``, over one group's offsets in the cluster."""

    def __init__(
        self,
        cluster: InMemoryKafka,
        *,
        group_id: str | None = None,
        client_id: str | None = None,
        auto_offset_reset: str = "latest",
        enable_auto_commit: bool = True,
        **options: Any,
    ) -> None:
        if auto_offset_reset not in ("earliest", "latest"):
            raise ValueError(f"auto_offset_reset {auto_offset_reset!r} is not earliest or latest")
        self._cluster = cluster
        self._group_id = group_id
        self._auto_offset_reset = auto_offset_reset
        self._auto_commit = enable_auto_commit
        self._coordinator = _Member(f"{client_id or 'in-memory'}-{id(self):x}")
        self._subscription = _Subscription(frozenset())
        self._listener: Any = None
        self._assigned: list[Any] = []
        self._positions: dict[Any, int] = {}
        self._paused: set[Any] = set()
        self._running = False
        self.waiting = False
        """True while a ``getone``/``getmany`` waits for a record: this consumer has nothing in hand."""

    def subscribe(self, topics: Sequence[str] = (), pattern: str | None = None, listener: Any = None) -> None:
        if pattern is not None:
            raise ValueError("the in-memory Kafka subscribes to named topics, not to a pattern")
        self._subscription = _Subscription(frozenset(topics))
        self._listener = listener

    def assign(self, partitions: Iterable[Any]) -> None:
        self._assigned = sorted(partitions)

    def assignment(self) -> set[Any]:
        return set(self._assigned)

    def subscription(self) -> frozenset[str]:
        return self._subscription.topics

    async def start(self) -> None:
        """Join: the subscribed topics' partitions assigned (topics made when new), each read from its group's
        committed offset, else from ``auto_offset_reset``; then the listener told, as after a rebalance."""
        if self._subscription.topics:
            for topic in self._subscription.topics:
                self._cluster.create_topic(topic)
            self._assigned = sorted(TopicPartition(t, PARTITION) for t in self._subscription.topics)
        for partition in self._assigned:
            committed = self._cluster.committed(self._group_id, partition)
            self._positions[partition] = committed if committed is not None else self._reset_position(partition)
        self._running = True
        self._cluster.joined(self)
        if self._listener is not None:
            await self._listener.on_partitions_assigned(set(self._assigned))

    async def stop(self) -> None:
        self._running = False
        self._cluster.left(self)

    def _reset_position(self, partition: Any) -> int:
        return 0 if self._auto_offset_reset == "earliest" else self._cluster.end_offset(partition.topic)

    # reading

    def has_records(self) -> bool:
        return any(self._readable(p) for p in self._assigned)

    def _readable(self, partition: Any) -> bool:
        return partition not in self._paused and self._positions[partition] < self._cluster.end_offset(partition.topic)

    def _take(self, limit: int, partitions: Sequence[Any]) -> list[Any]:
        """Up to ``limit`` records at this consumer's positions, in append order; the positions move past them."""
        chosen = [p for p in (partitions or self._assigned) if p not in self._paused]
        waiting = [
            (stored, partition)
            for partition in chosen
            for stored in self._cluster.stored_from(partition.topic, self._positions[partition])
        ]
        waiting.sort(key=lambda pair: pair[0].sequence)
        taken: list[Any] = []
        for stored, partition in waiting:
            if len(taken) == limit:
                break
            if stored.record.offset != self._positions[partition]:
                continue  # a record after one left behind by the limit
            taken.append(stored.record)
            self._positions[partition] = stored.record.offset + 1
        if taken and self._auto_commit and self._group_id is not None:
            for partition in chosen:
                self._cluster.commit(self._group_id, partition, self._positions[partition])
        return taken

    async def _wait(self, timeout_s: float | None) -> None:
        self.waiting = True
        self._cluster.consumers_changed()
        try:
            await self._cluster.wait_for_records(timeout_s)
        finally:
            self.waiting = False

    def _require_running(self) -> None:
        if not self._running:
            raise ConsumerStoppedError()

    async def getone(self, *partitions: Any) -> Any:
        while True:
            self._require_running()
            taken = self._take(1, partitions)
            if taken:
                return taken[0]
            await self._wait(None)

    async def getmany(
        self, *partitions: Any, timeout_ms: int = 0, max_records: int | None = None
    ) -> dict[Any, list[Any]]:
        deadline = asyncio.get_running_loop().time() + timeout_ms / 1000
        while True:
            self._require_running()
            taken = self._take(max_records or 2**31, partitions)
            if taken:
                batches: dict[Any, list[Any]] = {}
                for record in taken:
                    batches.setdefault(TopicPartition(record.topic, record.partition), []).append(record)
                return batches
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return {}
            await self._wait(remaining)

    # positions and offsets

    def seek(self, partition: Any, offset: int) -> None:
        if partition not in self._positions:
            raise IllegalStateError(f"{partition} is not assigned to this consumer")
        self._positions[partition] = offset
        self._cluster.records_changed()

    async def seek_to_beginning(self, *partitions: Any) -> None:
        for partition in partitions or self._assigned:
            self.seek(partition, 0)

    async def seek_to_end(self, *partitions: Any) -> None:
        for partition in partitions or self._assigned:
            self.seek(partition, self._cluster.end_offset(partition.topic))

    async def position(self, partition: Any) -> int:
        return self._positions[partition]

    def highwater(self, partition: Any) -> int:
        return self._cluster.end_offset(partition.topic)

    async def end_offsets(self, partitions: Iterable[Any]) -> dict[Any, int]:
        return {p: self._cluster.end_offset(p.topic) for p in partitions}

    async def committed(self, partition: Any) -> int | None:
        return self._cluster.committed(self._group_id, partition)

    async def commit(self, offsets: Mapping[Any, Any] | None = None) -> None:
        """The positions of the assigned partitions (default), or the given offsets (an offset, or an
        ``(offset, metadata)`` pair)."""
        chosen = offsets if offsets is not None else {p: self._positions[p] for p in self._assigned}
        for partition, offset in chosen.items():
            self._cluster.commit(self._group_id, partition, offset[0] if isinstance(offset, tuple) else offset)

    def pause(self, *partitions: Any) -> None:
        self._paused.update(partitions)

    def resume(self, *partitions: Any) -> None:
        self._paused.difference_update(partitions)
        self._cluster.records_changed()

    def paused(self) -> set[Any]:
        return set(self._paused)


@dataclass(frozen=True)
class _CreatedTopics:
    """The part of aiokafka's CreateTopics response FastStream reads (``to_object()["topic_errors"]``)."""

    errors: tuple[tuple[str, int], ...]

    def to_object(self) -> dict[str, Any]:
        return {
            "topic_errors": [
                {"topic": topic, "error_code": code, "error_message": None if not code else "topic exists"}
                for topic, code in self.errors
            ]
        }


class InMemoryAdmin:
    """The calls FastStream's admin service makes on ``aiokafka.admin.AIOKafkaAdminClient``."""

    def __init__(self, cluster: InMemoryKafka) -> None:
        self._cluster = cluster

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def create_topics(self, new_topics: Iterable[Any], timeout_ms: int | None = None) -> _CreatedTopics:
        return _CreatedTopics(
            tuple((t.name, 0 if self._cluster.create_topic(t.name) else TOPIC_ALREADY_EXISTS) for t in new_topics)
        )
