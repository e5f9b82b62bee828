"""How many workspace commands of one piece of work run at once, whichever of its threads starts them.

A service handling an incident starts commands from several threads: the diagnoser's counterfactual evaluations, its
trials, its feature runs. Each of those limits its own threads, but started together they would run more commands
than the CPUs the sandbox may use. Within ``sharing_lanes(count)`` (and in the copies of its context that worker
threads run in) each command waits for one of ``count`` lanes before it is prepared, and gives it back once it has
been reaped: so independent commands can be started as early as they are known, and a lane that comes free is taken
by the next command at once instead of idling until a whole group of commands has ended. Outside such a block a
command waits for nothing.

The wait is before the command's span opens: a command's span holds its preparation and its process, never its
queueing behind another command.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
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
def in_a_lane() -> Iterator[None]:
    """Hold a lane of the enclosing ``sharing_lanes`` for one command (nothing to wait for outside one)."""
    lanes = _lanes.get()
    if lanes is None:
        yield
        return
    with lanes:
        yield
