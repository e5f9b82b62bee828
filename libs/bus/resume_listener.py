"""Seek assigned partitions to the offsets an external input stored beside its state.

Kafka's committed offset and the input's own state can disagree after a crash between the two writes;
the input's stored offsets win (they were written in the same transaction as its state). Partitions the
input has no offset for start where the group's committed offset (or ``auto_offset_reset``) says.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from aiokafka import ConsumerRebalanceListener, TopicPartition

log = logging.getLogger("modelguard.bus")


class ResumeFromStoredOffsets(ConsumerRebalanceListener):  # type: ignore[misc]
    """Give it to the subscriber, then set :attr:`subscriber` to the subscriber it was given to."""

    def __init__(self, stored_offsets: Callable[[], Mapping[tuple[str, int], int]]) -> None:
        self.subscriber: Any = None  # faststream's subscriber: its ``consumer`` exists once it started
        self._stored_offsets = stored_offsets

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        return None

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        consumer = getattr(self.subscriber, "consumer", None)
        stored = self._stored_offsets()
        for partition in sorted(assigned):
            offset = stored.get((partition.topic, partition.partition))
            if offset is not None and consumer is not None:
                consumer.seek(partition, offset)
                log.info("resuming %s/%d at its stored offset %d", partition.topic, partition.partition, offset)
