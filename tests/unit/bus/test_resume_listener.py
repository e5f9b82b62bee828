"""An external input's stored offsets decide where its assigned partitions resume."""

from __future__ import annotations

import asyncio

from aiokafka import TopicPartition

from libs.bus.resume_listener import ResumeFromStoredOffsets


class _Consumer:
    """Partitions without a stored offset have a committed one here, so the start policy stays out of it."""

    def __init__(self) -> None:
        self.seeks: list[tuple[TopicPartition, int]] = []
        self.paused: set[TopicPartition] = set()
        self.paused_while_seeking: list[bool] = []

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self.seeks.append((partition, offset))
        self.paused_while_seeking.append(partition in self.paused)

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused |= set(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused -= set(partitions)

    async def committed(self, partition: TopicPartition) -> int | None:
        return 0


class _Subscriber:
    def __init__(self) -> None:
        self.consumer = _Consumer()


def test_assigned_partitions_with_a_stored_offset_are_sought_to_it_the_others_left_alone() -> None:
    listener = ResumeFromStoredOffsets(lambda: {("mcl", 0): 7, ("mcl", 2): 0, ("other", 1): 3})
    listener.subscriber = _Subscriber()
    assigned = {TopicPartition("mcl", 0), TopicPartition("mcl", 1), TopicPartition("mcl", 2)}

    asyncio.run(listener.on_partitions_assigned(assigned))

    assert listener.subscriber.consumer.seeks == [(TopicPartition("mcl", 0), 7), (TopicPartition("mcl", 2), 0)]
    assert listener.subscriber.consumer.paused_while_seeking == [True, True]
    assert listener.subscriber.consumer.paused == set()  # resumed afterwards


def test_offsets_are_read_at_each_assignment_not_once() -> None:
    stored = {("mcl", 0): 1}
    listener = ResumeFromStoredOffsets(lambda: dict(stored))
    listener.subscriber = _Subscriber()
    asyncio.run(listener.on_partitions_assigned({TopicPartition("mcl", 0)}))
    stored[("mcl", 0)] = 5
    asyncio.run(listener.on_partitions_assigned({TopicPartition("mcl", 0)}))

    assert [offset for _, offset in listener.subscriber.consumer.seeks] == [1, 5]
