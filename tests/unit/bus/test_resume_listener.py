"""An external input's stored offsets decide where its assigned partitions resume."""

from __future__ import annotations

import asyncio

from aiokafka import TopicPartition

from libs.bus.resume_listener import ResumeFromStoredOffsets


class _Consumer:
    def __init__(self) -> None:
        self.seeks: list[tuple[TopicPartition, int]] = []

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self.seeks.append((partition, offset))


class _Subscriber:
    def __init__(self) -> None:
        self.consumer = _Consumer()


def test_assigned_partitions_with_a_stored_offset_are_sought_to_it_the_others_left_alone() -> None:
    listener = ResumeFromStoredOffsets(lambda: {("mcl", 0): 7, ("mcl", 2): 0, ("other", 1): 3})
    listener.subscriber = _Subscriber()
    assigned = {TopicPartition("mcl", 0), TopicPartition("mcl", 1), TopicPartition("mcl", 2)}

    asyncio.run(listener.on_partitions_assigned(assigned))

    assert listener.subscriber.consumer.seeks == [(TopicPartition("mcl", 0), 7), (TopicPartition("mcl", 2), 0)]


def test_offsets_are_read_at_each_assignment_not_once() -> None:
    stored = {("mcl", 0): 1}
    listener = ResumeFromStoredOffsets(lambda: dict(stored))
    listener.subscriber = _Subscriber()
    asyncio.run(listener.on_partitions_assigned({TopicPartition("mcl", 0)}))
    stored[("mcl", 0)] = 5
    asyncio.run(listener.on_partitions_assigned({TopicPartition("mcl", 0)}))

    assert [offset for _, offset in listener.subscriber.consumer.seeks] == [1, 5]
