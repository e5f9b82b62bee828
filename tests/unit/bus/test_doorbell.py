"""Doorbells: a ring reaches the processes registered for its topic and no other; a reader gone without
unregistering is removed at the next ring; a ring is never an error for the one who rings."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from pathlib import Path

import pytest

from libs.bus.doorbell import DoorbellReceiver, Doorbells, topic_folder

pytestmark = pytest.mark.skipif(os.uname().sysname != "Linux", reason="abstract Unix sockets are Linux's")


def test_a_ring_reaches_each_reader_of_its_topic_and_only_them(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[int], int, int]:
        diagnoser = DoorbellReceiver(tmp_path, ["modelguard.context.v1"])
        replica = DoorbellReceiver(tmp_path, ["modelguard.context.v1"])
        repairer = DoorbellReceiver(tmp_path, ["modelguard.diagnosis.v1", "modelguard.review.v1"])
        for bell in (diagnoser, replica, repairer):
            bell.open()
        bells = Doorbells(tmp_path)
        try:
            rung = bells.ring("modelguard.context.v1")
            woke = await asyncio.gather(diagnoser.wait_past(0, 5.0), replica.wait_past(0, 5.0))
            assert woke == [True, True]
            assert not await repairer.wait_past(0, 0.05)
            rung_review = bells.ring("modelguard.review.v1")
            assert await repairer.wait_past(0, 5.0)
            return [diagnoser.rings, replica.rings, repairer.rings], rung, rung_review
        finally:
            bells.close()
            for bell in (diagnoser, replica, repairer):
                bell.close()

    rings, rung, rung_review = asyncio.run(scenario())

    assert rings == [1, 1, 1]
    assert (rung, rung_review) == (2, 1)


def test_a_wait_ends_at_its_timeout_without_a_ring_and_at_once_after_one_it_did_not_see(tmp_path: Path) -> None:
    async def scenario() -> tuple[bool, bool, bool]:
        bell = DoorbellReceiver(tmp_path, ["t"])
        bell.open()
        try:
            quiet = await bell.wait_past(bell.rings, 0.02)
            seen = bell.rings
            Doorbells(tmp_path).ring("t")
            while bell.rings == seen:  # the ring arrives while nobody waits
                await asyncio.sleep(0.001)
            missed = await bell.wait_past(seen, 60.0)  # returns at once: a ring came since ``seen``
            current = await bell.wait_past(bell.rings, 0.02)
            return quiet, missed, current
        finally:
            bell.close()

    assert asyncio.run(scenario()) == (False, True, False)


def test_closing_unregisters_and_a_reader_killed_without_closing_is_removed_by_the_next_ring(tmp_path: Path) -> None:
    async def closed_one() -> None:
        bell = DoorbellReceiver(tmp_path, ["t"])
        bell.open()
        assert len(os.listdir(tmp_path / "t")) == 1
        bell.close()

    asyncio.run(closed_one())
    assert os.listdir(tmp_path / "t") == []

    ready = multiprocessing.get_context("fork").Event()
    killed = multiprocessing.get_context("fork").Process(target=_register_and_hang, args=(tmp_path, ready))
    killed.start()
    try:
        assert ready.wait(30)
        assert len(os.listdir(tmp_path / "t")) == 1
    finally:
        killed.kill()
        killed.join(30)

    assert Doorbells(tmp_path).ring("t") == 0
    assert os.listdir(tmp_path / "t") == []


def _register_and_hang(folder: Path, ready: object) -> None:
    async def hang() -> None:
        DoorbellReceiver(folder, ["t"]).open()
        ready.set()  # type: ignore[attr-defined]
        await asyncio.sleep(600)

    asyncio.run(hang())


def test_ringing_nothing_is_no_error(tmp_path: Path) -> None:
    assert Doorbells(None).ring("t") == 0
    assert Doorbells(tmp_path / "absent").ring("t") == 0
    assert Doorbells(tmp_path).ring("../../etc") == 0
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "not-a-reader").touch()  # registered by nobody bound: removed as a reader gone
    assert Doorbells(tmp_path).ring("t") == 0


@pytest.mark.parametrize("topic", ["..", ".", "a/b", "", "x" * 250, "topic with spaces"])
def test_a_name_that_is_no_kafka_topic_names_no_folder_and_cannot_be_registered(tmp_path: Path, topic: str) -> None:
    assert topic_folder(tmp_path, topic) is None

    async def scenario() -> None:
        with pytest.raises(OSError, match="not a Kafka topic"):
            DoorbellReceiver(tmp_path, ["fine", topic]).open()

    asyncio.run(scenario())
    assert not (tmp_path / "fine").exists() or os.listdir(tmp_path / "fine") == []
