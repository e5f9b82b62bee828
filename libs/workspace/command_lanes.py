"""How many workspace commands of one piece of work run at once, whichever of its threads starts them.

A service handling an incident starts commands from several threads: the diagnoser's counterfactual evaluations, its
trials, its feature runs. Each of those limits its own threads, but started together they would run more commands
than the CPUs the sandbox may use. Within ``sharing_lanes(count)`` (and in the copies of its context that worker
threads run in) each command is prepared (``libs.sandbox.run.prepared_command``: checked, its sandbox made ready),
then waits for one of ``count`` lanes to run, and gives it back once its process has been reaped: so independent
commands can be started as early as they are known, and a lane that comes free is taken by the next command at
once, already prepared, instead of idling until a whole group of commands has ended, or while the next one is
prepared or the last one checked. Outside such a block a command waits for nothing.

The wait is before the command's span opens: a command's span holds its process and the checks after it, never its
queueing behind another command (nor its preparation, done while it queued).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar

_lanes: ContextVar[threading.Semaphore | None] = ContextVar("modelguard_command_lanes", default=None)


@contextlib.contextmanager
def sharing_lanes(count: int) -> Iterator[None]:
    """Within the block, at most ``count`` workspace commands run at once (at least one)."""
    token = _lanes.set(threading.BoundedSemaphore(max(1, count)))
    try:
        yield
    finally:
        _lanes.reset(token)


@contextlib.contextmanager
def in_a_lane() -> Iterator[Callable[[], None]]:
    """Hold a lane of the enclosing ``sharing_lanes`` for one command (nothing to wait for outside one). What the
    block is given gives the lane back early, once the command's process has been reaped (what remains is
    ModelGuard's checks of its tree and outputs); the lane is given back when the block ends at the latest."""
    lanes = _lanes.get()
    if lanes is None:
        yield _nothing
        return
    lanes.acquire()
    held = True

    def give_back() -> None:
        nonlocal held
        if held:
            held = False
            lanes.release()

    try:
        yield give_back
    finally:
        give_back()


def _nothing() -> None:
    return None
