"""Ledger: every verified event appended once to the incident's hash chain; checkpoints signed now and then."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from libs.events.codec import SignedEvent
from libs.ledger import AppendResult, LedgerStore


@dataclass
class LedgerSink:
    store: LedgerStore
    checkpoint: Callable[[], object]
    checkpoint_every: int = 50
    checkpoint_interval_s: float = 10.0
    appended: int = 0
    clock: Callable[[], float] = time.monotonic
    _last_checkpoint: float = field(default=float("-inf"))

    def __call__(self, signed: SignedEvent) -> AppendResult:
        """Append; sign a checkpoint after every N appends, or at the first append after a quiet interval."""
        result = self.store.append(signed)
        if result.appended:
            self.appended += 1
            now = self.clock()
            if self.appended % self.checkpoint_every == 0 or now - self._last_checkpoint >= self.checkpoint_interval_s:
                self.checkpoint()
                self._last_checkpoint = now
        return result
