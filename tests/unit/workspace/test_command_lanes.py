"""The lanes of one piece of work: within `sharing_lanes(n)`, and in the copies of its context that worker threads run
in, no more than n commands at once; outside any, nothing waits; a lane is given back whatever the command did."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from pathlib import Path
from typing import Any

import pytest

from libs.sandbox.command_start import BegunOrDone, command_started
from libs.workspace.command_lanes import (
    AfterBegun,
    CommandWithdrawn,
    Gate,
    behind,
    in_a_lane,
    preparing_threads,
    sharing_lanes,
)
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


@pytest.mark.parametrize(("commands", "within", "outside"), [(3, 3, 2), (12, 3, 2), (2, 2, 2), (1, 1, 1), (0, 1, 1)])
def test_within_lanes_one_thread_more_than_the_lanes_prepares_the_next_command(
    commands: int, within: int, outside: int
) -> None:
    assert preparing_threads(commands, 2) == outside  # outside any lanes the threads are all that bounds them
    with sharing_lanes(2):
        assert preparing_threads(commands, 2) == within


def test_on_the_threads_given_the_command_beyond_the_lanes_is_begun_while_the_lanes_are_held() -> None:
    """Two commands hold both lanes until a third has begun (been prepared); on ``preparing_threads`` threads it
    begins beside them and waits for a lane, and still never runs beside both."""
    counting, third_begun = Counting(), threading.Event()
    began: list[int] = []

    def command(index: int) -> None:
        began.append(index)
        if len(began) == 3:
            third_begun.set()
        with in_a_lane():
            with counting.lock:
                counting.running += 1
                counting.most = max(counting.most, counting.running)
            if index < 2:
                assert third_begun.wait(timeout=10), "the third command was begun only once a lane was free"
            with counting.lock:
                counting.running -= 1

    with sharing_lanes(2), ThreadPoolExecutor(max_workers=preparing_threads(3, 2)) as pool:
        for future in [pool.submit(copy_context().run, command, index) for index in range(3)]:
            future.result(timeout=30)
    assert counting.most == 2


def test_a_gate_after_runs_begun_lets_its_commands_go_once_each_began_or_ended() -> None:
    begun = BegunOrDone()
    gate = AfterBegun("the first runs", begun, {"a", "b"}, wait_s=30)
    taken = threading.Event()

    def behind_them() -> None:
        with behind(gate), in_a_lane():
            taken.set()

    thread = threading.Thread(target=copy_context().run, args=(behind_them,))
    thread.start()
    begun.run("a", command_started)  # "a" begins its command
    assert not taken.wait(timeout=0.2), "it went before b had begun or ended"
    begun.run("b", lambda: None)  # "b" ends without a command
    assert taken.wait(timeout=10)
    thread.join(timeout=10)


def test_a_gate_after_runs_begun_goes_after_its_wait_whatever_they_did() -> None:
    gate = AfterBegun("runs that never begin", BegunOrDone(), {"a"}, wait_s=0.05)
    with behind(gate), in_a_lane():
        pass


def test_within_two_gates_a_command_waits_for_both_and_is_withdrawn_by_either() -> None:
    outer, inner = Gate("compiles"), AfterBegun("the first runs", BegunOrDone(), (), wait_s=0.05)
    outer.withdraw()
    with behind(outer), behind(inner), pytest.raises(CommandWithdrawn, match="compiles did not pass"), in_a_lane():
        pass
    opened, withdrawn = Gate("the targeted tests"), Gate("the whole suite")
    opened.open()
    withdrawn.withdraw()
    with (
        behind(opened),
        behind(withdrawn),
        pytest.raises(CommandWithdrawn, match="whole suite did not pass"),
        in_a_lane(),
    ):
        pass
    with behind(opened), in_a_lane():  # the inner block's gate is gone with it
        pass


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


def test_a_lane_given_back_early_is_taken_by_the_next_command_while_the_first_block_goes_on() -> None:
    with sharing_lanes(1):
        taken = threading.Event()

        def next_command() -> None:
            with in_a_lane():
                taken.set()

        with in_a_lane() as give_back:
            give_back()
            thread = threading.Thread(target=copy_context().run, args=(next_command,))
            thread.start()
            assert taken.wait(timeout=10), "the lane given back early was not free for the next command"
            give_back()  # a second time gives nothing back: the semaphore is bounded and would raise
        thread.join(timeout=10)
        with in_a_lane():  # and the lane is free again, exactly once
            pass


class LaneRecord:
    """When each thread took its lane, gave it back, and took its sandbox slot (``take_slot``). A command that
    takes a lane holds it until ``commands`` slots were taken: the others are prepared while it holds the lane, or
    never (and the command fails)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, commands: int) -> None:
        import libs.sandbox.run as sandbox_run
        import libs.workspace.runner as runner

        self.lock = threading.Lock()
        self.events: list[tuple[str, int, float]] = []
        self.commands = commands
        self.all_prepared = threading.Event()
        lane, take_slot = runner.in_a_lane, sandbox_run.take_slot

        @contextlib.contextmanager
        def recorded_lane() -> Iterator[Callable[[], None]]:
            with lane() as give_back:
                self.note("lane taken")
                assert self.all_prepared.wait(timeout=30), "a command waiting for its lane was not prepared"

                def give() -> None:
                    self.note("lane given back")
                    give_back()

                yield give
                self.note("block ended")

        def recorded_slot(*args: Any) -> Any:
            self.note("slot taken")
            if sum(name == "slot taken" for name, _, _ in self.events) >= self.commands:
                self.all_prepared.set()
            return take_slot(*args)

        monkeypatch.setattr(runner, "in_a_lane", recorded_lane)
        monkeypatch.setattr(sandbox_run, "take_slot", recorded_slot)

    def note(self, what: str) -> None:
        with self.lock:
            self.events.append((what, threading.get_ident(), time.monotonic()))

    def first(self, what: str, thread: int) -> float:
        return min(at for name, who, at in self.events if name == what and who == thread)


def test_a_sandboxed_command_is_prepared_before_its_lane_and_gives_it_back_once_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = LaneRecord(monkeypatch, commands=2)
    (_, first_ended), (second_began, _) = _two_sleeps(tmp_path, 1)
    assert first_ended <= second_began  # one lane: still one after the other
    threads = {who for _, who, _ in record.events}
    assert len(threads) == 2
    for thread in threads:
        # its sandbox slot was taken (the command checked, its view made) before it waited for its lane, and the
        # lane was given back when the process was reaped, before the checks of its tree and outputs ended the block
        assert record.first("slot taken", thread) < record.first("lane taken", thread)
        assert record.first("lane given back", thread) < record.first("block ended", thread)


def _behind_in_a_thread(gate: Gate, tmp_path: Path) -> tuple[threading.Thread, list[object]]:
    """``run_command`` writing a file, in a thread behind ``gate``; what it returned or raised."""
    outcome: list[object] = []
    argv = ["python", "-c", "import sys; open(sys.argv[1], 'w').write('ran')", str(tmp_path / "out" / "ran.txt")]
    (tmp_path / "out").mkdir()
    (tmp_path / "work").mkdir()

    def command() -> None:
        with behind(gate):
            try:
                outcome.append(run_command(argv, tmp_path / "work", 60))
            except CommandWithdrawn as exc:
                outcome.append(exc)

    thread = threading.Thread(target=command)
    thread.start()
    return thread, outcome


def test_a_command_behind_a_withdrawn_gate_is_prepared_but_never_runs(tmp_path: Path) -> None:
    gate = Gate("compiles")
    thread, outcome = _behind_in_a_thread(gate, tmp_path)
    thread.join(timeout=1.0)
    assert thread.is_alive() and outcome == []  # prepared, waiting for the gate
    gate.withdraw()
    gate.open()  # decided once: opening afterwards changes nothing
    thread.join(timeout=60)
    assert len(outcome) == 1 and isinstance(outcome[0], CommandWithdrawn), outcome
    assert "compiles did not pass" in str(outcome[0])
    assert not (tmp_path / "out" / "ran.txt").exists()


def test_a_command_behind_an_opened_gate_runs_once_it_opens(tmp_path: Path) -> None:
    gate = Gate("compiles")
    thread, outcome = _behind_in_a_thread(gate, tmp_path)
    thread.join(timeout=1.0)
    assert not (tmp_path / "out" / "ran.txt").exists()
    gate.open()
    thread.join(timeout=60)
    assert len(outcome) == 1 and isinstance(outcome[0], CommandResult) and outcome[0].returncode == 0, outcome
    assert (tmp_path / "out" / "ran.txt").read_text() == "ran"


def test_outside_a_gate_nothing_waits_for_one() -> None:
    """With the gate undecided, a command outside its block takes its lane at once; one inside waits until it opens."""
    gate = Gate("compiles")
    took: list[str] = []

    def command(where: str) -> None:
        with in_a_lane():
            took.append(where)

    def inside_block() -> None:
        with behind(gate):
            command("inside")

    inside = threading.Thread(target=inside_block, daemon=True)
    inside.start()
    outside = threading.Thread(target=command, args=("outside",), daemon=True)
    outside.start()
    outside.join(timeout=10)
    inside.join(timeout=0.3)
    assert took == ["outside"] and inside.is_alive()
    gate.open()
    inside.join(timeout=10)
    assert took == ["outside", "inside"]
