"""Noticing a new, empty broker behind a running consumer: its positions beyond the end, or the group's
committed offset gone backwards; the consumer then resumes from what the new broker has committed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from aiokafka.structs import TopicPartition

from libs.bus.broker_loss import BrokerLossWatch

TP = TopicPartition("modelguard.evaluations.v1", 0)


@dataclass
class FakeConsumer:
    end: int
    position_now: int
    committed_now: int | None
    seeks: list[tuple[str, int]] = field(default_factory=list)
    fetched_highwater: int | None = None

    def highwater(self, partition: TopicPartition) -> int | None:
        return self.fetched_highwater

    def assignment(self) -> set[TopicPartition]:
        return {TP}

    async def end_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.end for tp in partitions}

    async def position(self, partition: TopicPartition) -> int:
        return self.position_now

    async def committed(self, partition: TopicPartition) -> int | None:
        return self.committed_now

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self.seeks.append(("seek", offset))
        self.position_now = offset

    async def seek_to_beginning(self, *partitions: TopicPartition) -> bool:
        self.seeks.append(("beginning", 0))
        self.position_now = 0
        return True


def check(watch: BrokerLossWatch, consumer: FakeConsumer):  # type: ignore[no-untyped-def]
    return asyncio.run(watch.check(consumer))


def test_the_same_broker_moving_on_changes_nothing() -> None:
    watch, consumer = BrokerLossWatch(), FakeConsumer(end=10, position_now=8, committed_now=8)
    assert check(watch, consumer) == []
    consumer.end, consumer.position_now, consumer.committed_now = 20, 20, 20
    assert check(watch, consumer) == [] and consumer.seeks == []


def test_a_position_beyond_the_end_resumes_from_the_beginning_when_nothing_valid_is_committed() -> None:
    # the dead broker's offset 57 was even committed into the new one, which holds 2 records
    watch, consumer = BrokerLossWatch(), FakeConsumer(end=2, position_now=57, committed_now=57)
    (resumed,) = check(watch, consumer)
    assert (resumed.why, resumed.resumed_at, consumer.seeks) == ("position 57 beyond the end 2", 0, [("beginning", 0)])


def test_commits_that_vanished_resume_from_the_beginning_even_when_the_new_broker_already_caught_up() -> None:
    watch, consumer = BrokerLossWatch(), FakeConsumer(end=57, position_now=57, committed_now=57)
    assert check(watch, consumer) == []
    consumer.end, consumer.committed_now = 60, None  # a new broker with 60 records that never saw our commits
    (resumed,) = check(watch, consumer)
    assert resumed.why == "committed offset went from 57 to None" and consumer.seeks == [("beginning", 0)]
    # reading it again commits small offsets: the new baseline, not another loss
    consumer.position_now, consumer.committed_now = 5, 5
    assert check(watch, consumer) == []


def test_resumes_from_an_offset_the_new_broker_has_committed() -> None:
    watch, consumer = BrokerLossWatch(), FakeConsumer(end=40, position_now=30, committed_now=30)
    assert check(watch, consumer) == []
    consumer.committed_now = 12
    (resumed,) = check(watch, consumer)
    assert (resumed.resumed_at, consumer.seeks) == (12, [("seek", 12)])


def test_an_end_offset_below_what_the_last_fetch_reported_is_not_a_new_broker() -> None:
    # Tansu answers ListOffsets with the last record batch's base offset + 1: a 45-record batch read whole
    watch = BrokerLossWatch()
    consumer = FakeConsumer(end=1304, position_now=1348, committed_now=1348, fetched_highwater=1348)
    assert check(watch, consumer) == [] and consumer.seeks == []
    consumer.end, consumer.committed_now = 1304, None  # a new broker after all: our commits are gone
    (resumed,) = check(watch, consumer)
    assert resumed.why == "committed offset went from 1348 to None" and consumer.seeks == [("beginning", 0)]
