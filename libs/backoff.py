"""Exponential backoff with jitter, one formula for every place that waits after a run of failures.

The n-th wait of a run (1 for the first) is ``base_s`` doubled n - 1 times, capped at ``cap_s``, then
shortened by up to ``jitter`` of itself, so processes that failed together do not come back together.
Pure: the random draw is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    base_s: float = 1.0
    cap_s: float = 30.0
    jitter: float = 0.2

    def delay(self, consecutive: int, draw: float = 0.0) -> float:
        """The wait after failure number ``consecutive`` of a run; ``draw`` in [0, 1)."""
        nominal = min(self.cap_s, self.base_s * 2.0 ** max(0, consecutive - 1))
        return nominal * (1.0 - self.jitter * draw)
