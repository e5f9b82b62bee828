"""Seek assigned partitions to the offsets an external input stored beside its state.

Kafka's committed offset and the input's own state can disagree after a crash between the two writes;
the input's stored offsets win (they were written in the same transaction as its state). Partitions the
input has no offset for start where the group's committed offset says, and with neither where the start
policy says (``libs/bus/start_policy.py``: by default the end, so DataHub's history is not read as new).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiokafka import ConsumerRebalanceListener, TopicPartition

from libs.bus.offset_by_time import first_offset_since
from libs.bus.start_policy import LATEST, StartPolicy

log = logging.getLogger("modelguard.bus")


class ResumeFromStoredOffsets(ConsumerRebalanceListener):  # type: ignore[misc]
    """Give it to the subscriber, then set :attr:`subscriber` to the subscriber it was given to."""

    def __init__(
        self,
        stored_offsets: Callable[[], Mapping[tuple[str, int], int]],
        start: StartPolicy = LATEST,
        clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        probe: Callable[[], Any] | None = None,
    ) -> None:
        """``probe`` makes an unstarted consumer with no group, to find an offset by time (``offset_by_time``);
        without one, the broker's own answer is taken as it is."""
        self.subscriber: Any = None  # faststream's subscriber: its ``consumer`` exists once it started
        self.before_revoke: Callable[[], Awaitable[None]] | None = None
        """Awaited before partitions are given up (the input's commit in flight, ``libs/bus/commit_behind.py``)."""
        self._stored_offsets = stored_offsets
        self.start = start
        self._clock_ms = clock_ms
        self._probe = probe

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        if self.before_revoke is not None:  # a commit in flight: what is stored then says where each resumes
            await self.before_revoke()

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        consumer = getattr(self.subscriber, "consumer", None)
        if consumer is None:
            return
        # aiokafka makes the assignment fetchable before it calls this listener: paused, nothing is handed out
        # from the group's default position while the right one is looked up
        consumer.pause(*assigned)
        try:
            stored = self._stored_offsets()
            for partition in sorted(assigned):
                offset = stored.get((partition.topic, partition.partition))
                if offset is not None:
                    consumer.seek(partition, offset)
                    log.info("resuming %s/%d at its stored offset %d", partition.topic, partition.partition, offset)
                elif await consumer.committed(partition) is None:
                    await self._first_start(consumer, partition)
        finally:
            consumer.resume(*assigned)

    async def _first_start(self, consumer: Any, partition: TopicPartition) -> None:
        """No stored and no committed offset: the start policy chooses, and the choice is committed."""
        if self.start.kind == "earliest":
            await consumer.seek_to_beginning(partition)
        elif self.start.kind == "latest":
            await consumer.seek_to_end(partition)
        else:
            since_ms = self._clock_ms() - int((self.start.max_age_s or 0) * 1000)
            consumer.seek(partition, await self._offset_since(consumer, partition, since_ms))
        position = await consumer.position(partition)
        await consumer.commit({partition: position})
        log.info("first start on %s/%d: %s, from offset %d", partition.topic, partition.partition, self.start, position)

    async def _offset_since(self, consumer: Any, partition: TopicPartition, since_ms: int) -> int:
        if self._probe is None:
            found = (await consumer.offsets_for_times({partition: since_ms})).get(partition)
            offset = (await consumer.end_offsets([partition]))[partition] if found is None else found.offset
            return int(offset)  # aiokafka is untyped: an offset is an int
        probe = self._probe()
        await probe.start()
        try:
            return await first_offset_since(probe, partition, since_ms)
        finally:
            await probe.stop()
