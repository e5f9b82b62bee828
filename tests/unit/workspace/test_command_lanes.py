"""The lanes of one piece of work: within `sharing_lanes(n)`, and in the copies of its context that worker threads run
in, no more than n commands at once; outside any, nothing waits; a lane is given back whatever the command did."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from pathlib import Path

import pytest

from libs.workspace.command_lanes import in_a_lane, sharing_lanes
from libs.workspace.runner import CommandResult, run_command


class Counting:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = self.most = 0

    def command(self, hold_s: float = 0.05) -> None:
        with in_a_lane():
            with self.lock:
                self.running += 1
                self.most = max(self.most, self.running)
            time.sleep(hold_s)
            with self.lock:
                self.running -= 1


@pytest.mark.parametrize("count", [1, 2, 3])
def test_threads_in_copies_of_the_context_never_run_more_commands_than_the_lanes(count: int) -> None:
    counting = Counting()
    with sharing_lanes(count), ThreadPoolExecutor(max_workers=6) as pool:
        done = [pool.submit(copy_context().run, counting.command) for _ in range(12)]
        for future in done:
            future.result(timeout=30)
    assert counting.most == count


def test_outside_any_lanes_commands_do_not_wait_for_each_other() -> None:
    meeting = threading.Barrier(4)

    def command() -> None:
        with in_a_lane():
            meeting.wait(timeout=10)  # breaks, and fails the test, unless all four are in at once

    with ThreadPoolExecutor(max_workers=4) as pool:
        for future in [pool.submit(command) for _ in range(4)]:
            future.result(timeout=30)


def test_a_thread_started_without_a_copy_of_the_context_is_outside_the_lanes() -> None:
    meeting = threading.Barrier(2)

    def command() -> None:
        with in_a_lane():
            meeting.wait(timeout=10)

    with sharing_lanes(1), ThreadPoolExecutor(max_workers=2) as pool:  # a plain submit: the pool's own context
        for future in [pool.submit(command) for _ in range(2)]:
            future.result(timeout=30)


def test_a_command_that_fails_gives_its_lane_back() -> None:
    with sharing_lanes(1):
        with pytest.raises(RuntimeError), in_a_lane():
            raise RuntimeError("the command's own failure")
        taken = threading.Event()

        def next_command() -> None:
            with in_a_lane():
                taken.set()

        thread = threading.Thread(target=copy_context().run, args=(next_command,))
        thread.start()
        thread.join(timeout=10)
    assert taken.is_set()


def _two_sleeps(tmp_path: Path, lanes: int) -> list[tuple[float, float]]:
    """When each of two commands started at once ran, by its own clock."""
    argv = ["python", "-c", "import time; began = time.time(); time.sleep(0.6); print(began, time.time())"]
    with sharing_lanes(lanes), ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(copy_context().run, run_command, argv, tmp_path, 60) for _ in range(2)]
        results: list[CommandResult] = [future.result(timeout=120) for future in futures]
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    began_and_ended = [tuple(map(float, r.stdout.split())) for r in results]
    return sorted((began, ended) for began, ended in began_and_ended)


def test_with_one_lane_two_sandboxed_commands_run_one_after_the_other(tmp_path: Path) -> None:
    (_, first_ended), (second_began, _) = _two_sleeps(tmp_path, 1)
    assert first_ended <= second_began


def test_with_two_lanes_two_sandboxed_commands_run_together(tmp_path: Path) -> None:
    (_, first_ended), (second_began, _) = _two_sleeps(tmp_path, 2)
    assert second_began < first_ended
