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

Within ``behind(gate)`` a command, once prepared, also waits for ``gate`` to be decided before it takes a lane: opened,
it goes on; withdrawn, it raises ``CommandWithdrawn`` and never runs. Within several, it waits for each, outermost
first (an inner ``behind`` adds its gate, never replaces one in force). So work that may run only after an earlier
command passed (the validator's lanes after ``compiles``) is prepared while that command runs, and lets its own
commands go the moment it has passed, instead of being started only then.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextvars import ContextVar

from libs.sandbox.command_start import BegunOrDone

_lanes: ContextVar[threading.Semaphore | None] = ContextVar("modelguard_command_lanes", default=None)


class CommandWithdrawn(RuntimeError):
    """A command prepared behind a gate that was withdrawn: it did not run."""


class Gate:
    """Decided once: opened (the commands behind it go) or withdrawn (they do not run). Opening after a withdrawal,
    or withdrawing after an opening, changes nothing."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._lock = threading.Lock()
        self._decided = threading.Event()
        self._opened = False

    def open(self) -> None:
        self._decide(True)

    def withdraw(self) -> None:
        self._decide(False)

    def _decide(self, opened: bool) -> None:
        with self._lock:
            if not self._decided.is_set():
                self._opened = opened
                self._decided.set()

    def passed(self) -> bool:
        """Wait until it is decided; True when it was opened."""
        self._decided.wait()
        return self._opened


class AfterBegun(Gate):
    """Lets its commands go once the runs ``keys`` of ``begun`` are past their first command's start, or after
    ``wait_s`` whatever they did; never withdrawn. It orders commands queued for the same lanes, which would
    otherwise take them in whatever order their preparations ended."""

    def __init__(self, what: str, begun: BegunOrDone, keys: Iterable[Hashable], wait_s: float) -> None:
        super().__init__(what)
        self._begun, self._keys, self._wait_s = begun, set(keys), wait_s

    def passed(self) -> bool:
        self._begun.wait(self._keys, self._wait_s)
        return True


_gates: ContextVar[tuple[Gate, ...]] = ContextVar("modelguard_command_gates", default=())


@contextlib.contextmanager
def behind(gate: Gate) -> Iterator[None]:
    """Within the block (and the copies of its context threads run in), every command waits for ``gate`` once it is
    prepared, and raises ``CommandWithdrawn`` instead of running when the gate is withdrawn. Within another
    ``behind``, it waits for both, the outer one first."""
    token = _gates.set((*_gates.get(), gate))
    try:
        yield
    finally:
        _gates.reset(token)


@contextlib.contextmanager
def sharing_lanes(count: int) -> Iterator[None]:
    """Within the block, at most ``count`` workspace commands run at once (at least one)."""
    token = _lanes.set(threading.BoundedSemaphore(max(1, count)))
    try:
        yield
    finally:
        _lanes.reset(token)


def preparing_threads(commands: int, parallel: int) -> int:
    """How many threads to start ``commands`` independent commands on, ``parallel`` of them at once. Within
    ``sharing_lanes`` (which holds them to its lanes), one more than ``parallel``: a command beyond the lanes is then
    prepared while the others run and takes the first lane given back at once, where on ``parallel`` threads it would
    be begun only once a whole command before it was done (its outputs read, its tree checked), 6-10 ms later on the
    2-core machine. Outside, the threads are what holds them to ``parallel``."""
    threads = parallel + 1 if _lanes.get() is not None else parallel
    return max(1, min(threads, commands))


@contextlib.contextmanager
def in_a_lane() -> Iterator[Callable[[], None]]:
    """Hold a lane of the enclosing ``sharing_lanes`` for one command (nothing to wait for outside one), once every
    enclosing ``behind``'s gate was opened (raises ``CommandWithdrawn`` when one was withdrawn). What the
    block is given gives the lane back early, once the command's process has been reaped (what remains is
    ModelGuard's checks of its tree and outputs); the lane is given back when the block ends at the latest."""
    for gate in _gates.get():
        if not gate.passed():
            raise CommandWithdrawn(f"not run: {gate.what} did not pass")
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
