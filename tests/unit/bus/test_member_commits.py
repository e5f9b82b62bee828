from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from libs.bus.member_commits import NO_GENERATION, MemberCommits, commit_as_reader


class GroupMember:
    """The parts of an aiokafka consumer that member_commits reads, and a commit that counts."""

    def __init__(self) -> None:
        self._subscription = SimpleNamespace(
            subscription=SimpleNamespace(assignment=object()), reassignment_in_progress=False
        )
        self._coordinator = SimpleNamespace(generation=3)
        self.commits = 0
        self.seeks: list[tuple[Any, int]] = []

    async def commit(self) -> None:
        self.commits += 1

    def seek(self, partition: Any, offset: int) -> None:
        self.seeks.append((partition, offset))

    def join_again(self) -> None:
        self._subscription.subscription.assignment = object()


def _commits_after(change: Any) -> int:
    consumer = GroupMember()
    in_hand = MemberCommits(consumer, "t/0@7")
    change(consumer)
    asyncio.run(in_hand.commit())
    return consumer.commits


def test_the_member_that_read_a_message_commits_it() -> None:
    assert _commits_after(lambda consumer: None) == 1


def test_nothing_is_committed_once_the_membership_changed() -> None:
    assert _commits_after(GroupMember.join_again) == 0  # a new assignment, even under the same generation number
    assert _commits_after(lambda c: setattr(c._coordinator, "generation", 4)) == 0
    assert _commits_after(lambda c: setattr(c._coordinator, "generation", NO_GENERATION)) == 0
    assert _commits_after(lambda c: setattr(c._subscription, "reassignment_in_progress", True)) == 0
    assert _commits_after(lambda c: setattr(c._subscription.subscription, "assignment", None)) == 0


def test_a_message_read_while_the_member_was_not_settled_is_never_committed() -> None:
    consumer = GroupMember()
    consumer._subscription.reassignment_in_progress = True
    in_hand = MemberCommits(consumer, "t/0@7")
    consumer._subscription.reassignment_in_progress = False
    asyncio.run(in_hand.commit())
    assert consumer.commits == 0


def test_a_consumer_without_group_state_commits_as_before_and_seeks_go_through() -> None:
    class Plain:
        commits = 0

        async def commit(self) -> None:
            Plain.commits += 1

    message = SimpleNamespace(consumer=Plain())
    commit_as_reader(message, "t/0@1")
    commit_as_reader(message, "t/0@1")  # wrapped once
    assert isinstance(message.consumer, MemberCommits) and isinstance(message.consumer._consumer, Plain)
    asyncio.run(message.consumer.commit())
    assert Plain.commits == 1
    member = GroupMember()
    MemberCommits(member, "t/0@1").seek("t/0", 5)
    assert member.seeks == [("t/0", 5)]
