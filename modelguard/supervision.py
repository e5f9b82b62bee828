"""When the embedded stack's supervisor starts a service again: exponential backoff with jitter.

A service that exits is started again after ``base_s``, then twice as long for each exit in a row, up to
``cap_s``, each delay shortened by up to ``jitter`` of itself (so services that fell together do not come
back together). A service that stayed up ``stable_s`` is healthy again: its next exit waits ``base_s``.
Pure: the clock and the random draw are passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from libs.backoff import Backoff


@dataclass(frozen=True)
class RestartPolicy(Backoff):
    """``Backoff``'s delay is the wait before start number ``consecutive`` of a run of exits."""

    stable_s: float = 30.0


@dataclass
class ServiceRecord:
    """What the supervisor knows of one service."""

    name: str
    pid: int | None = None
    started_at: float = 0.0
    restarts: int = 0
    consecutive: int = 0
    exits: list[int] = field(default_factory=list)
    """Exit codes, newest last (negative: killed by that signal); the last ten are kept."""
    next_start: float | None = None

    def exited(self, code: int, now: float, policy: RestartPolicy, draw: float) -> float:
        """Record an exit; when to start it again."""
        self.exits = [*self.exits, code][-10:]
        self.pid = None
        self.consecutive = 1 if now - self.started_at >= policy.stable_s else self.consecutive + 1
        self.next_start = now + policy.delay(self.consecutive, draw)
        return self.next_start

    def started(self, pid: int, now: float, restart: bool) -> None:
        self.pid = pid
        self.started_at = now
        self.next_start = None
        if restart:
            self.restarts += 1
