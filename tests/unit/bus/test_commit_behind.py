"""The commit in flight of an external input's batches: one at a time, a failed one answers the records to read
again and owes a reload of the input's state, which every later batch waits for; a partition's batches go behind
only once its input stores an offset for it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence

import pytest

from libs.bus.commit_behind import CommitBehind
from libs.bus.external_input import ExternalRecord, InputPosition, RecordVerdict, SettleBehind


def _records(partition: int, *offsets: int) -> list[ExternalRecord]:
    return [ExternalRecord(InputPosition("mcl", partition, offset), b"x") for offset in offsets]


class _Input:
    """A fake input: its commits wait for ``release`` and fail while ``failing`` is set; so do its reloads while
    ``reload_failing`` is."""

    def __init__(self) -> None:
        self.stored: dict[tuple[str, int], int] = {}
        self.committed: list[int] = []
        self.reloads = 0
        self.failing = False
        self.reload_failing = False
        self.release = threading.Event()

    def begin(self, verdicts: Sequence[RecordVerdict]) -> Callable[[], None]:
        last = verdicts[-1].record.position

        def commit() -> None:
            assert self.release.wait(10)
            if self.failing:
                raise OSError("database or disk is full")
            self.committed.append(last.offset)
            self.stored[(last.topic, last.partition)] = last.offset + 1

        return commit

    def reload(self) -> None:
        if self.reload_failing:
            raise OSError("database or disk is full")
        self.reloads += 1

    def behind(self) -> CommitBehind:
        return CommitBehind(SettleBehind(self.begin, self.reload), lambda: dict(self.stored), "test")


def test_a_partition_goes_behind_once_its_input_stores_an_offset_for_it() -> None:
    fake = _Input()
    behind = fake.behind()
    assert not behind.may_go_behind(_records(0, 0, 1))
    fake.stored[("mcl", 0)] = 2
    assert behind.may_go_behind(_records(0, 2, 3)) and not behind.may_go_behind([*_records(0, 4), *_records(1, 0)])


def test_the_commit_runs_while_the_caller_goes_on_and_ends_when_waited_for() -> None:
    fake = _Input()

    async def scenario() -> None:
        behind = fake.behind()
        records = _records(0, 0, 1)
        behind.begin([RecordVerdict(r) for r in records], records)
        with pytest.raises(AssertionError, match="in flight"):
            behind.begin([RecordVerdict(r) for r in records], records)
        await asyncio.sleep(0.05)
        assert fake.committed == []  # still waiting for its release: the caller was never held up
        fake.release.set()
        assert await behind.ended() == ()
        assert fake.committed == [1] and fake.reloads == 0
        assert await behind.ended() == ()  # nothing in flight: nothing to wait for

    asyncio.run(scenario())


def test_a_failed_commit_answers_its_records_and_no_batch_goes_on_before_the_state_is_read_again() -> None:
    fake = _Input()
    fake.release.set()

    async def scenario() -> None:
        behind = fake.behind()
        records = _records(0, 5, 6)
        fake.failing, fake.reload_failing = True, True
        behind.begin([RecordVerdict(r) for r in records], records)
        assert list(await behind.ended()) == records  # read again; the reload failed too
        with pytest.raises(OSError):
            await behind.reloaded()  # the next batch fails before it is handled
        fake.reload_failing = False
        await behind.reloaded()
        await behind.reloaded()  # owed once
        assert fake.reloads == 1 and fake.committed == []

    asyncio.run(scenario())
