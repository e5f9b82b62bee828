"""Telling a caller that a command's own work has begun: its process let go here, or its request handed to the
workspace runner or a Job.

Until then, preparing the command (checking it, its view, hashing its tree) is this process's CPU work, done under
the interpreter's lock. A caller with CPU work of its own to do beside its commands (the diagnoser's data evidence:
about 100 ms of pandas) does it once they have begun rather than as they are prepared: done at the same moment it
made their preparation take 40-100 ms instead of about 10 (``feature_evidence.py``). The listener is held in a
context variable, so a command run in a copy of the caller's context (a pool's thread) tells the caller that set it,
and nobody else.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Hashable, Iterator
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)

_listener: ContextVar[Callable[[], None] | None] = ContextVar("modelguard_command_start", default=None)


def command_started() -> None:
    """Called by the sandbox once a command's own work has begun. A listener that fails is logged and does not touch
    the command: it is called between letting the process go and watching it."""
    listener = _listener.get()
    if listener is not None:
        try:
            listener()
        except Exception:
            log.exception("a listener for a command's start failed; the command goes on")


@contextlib.contextmanager
def telling(listener: Callable[[], None]) -> Iterator[None]:
    """Within the block (and in copies of its context made there), ``listener`` hears each command that begins."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


class BegunOrDone:
    """Runs that are past their first command's start: it began, or the run ended without one (a cached result, a
    refusal, an error). ``wait`` until given runs all are."""

    def __init__(self) -> None:
        self._past: set[Hashable] = set()
        self._changed = threading.Condition()

    def run(self, key: Hashable, work: Callable[[], T]) -> T:
        """``work()``, marking ``key`` past once its first command begins, or once it ends."""
        try:
            with telling(lambda: self._mark(key)):
                return work()
        finally:
            self._mark(key)

    def wait(self, keys: set[Hashable], timeout_s: float) -> bool:
        """Whether every run of ``keys`` is past its first command's start within ``timeout_s``."""
        with self._changed:
            return self._changed.wait_for(lambda: keys <= self._past, timeout_s)

    def _mark(self, key: Hashable) -> None:
        with self._changed:
            if key not in self._past:
                self._past.add(key)
                self._changed.notify_all()
