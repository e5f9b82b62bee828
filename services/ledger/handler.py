"""Ledger: every verified event appended once, after its cause, to the incident's hash chain; checkpoints
signed after every N appends, at the first append after a quiet interval, by a timer (`tick`) when an
event older than the interval is under no checkpoint, so an idle ledger's newest events are covered too, and when
the ledger stops gracefully (`seal_uncovered`), so a stopped ledger's are.

Events of one incident arrive on several topics, so the ledger can see an effect before its cause. It
refuses to append an effect whose cause is not in the log yet: the input is retried (its offset is not
committed, so nothing is lost) until the cause is there, which keeps every chain in causal order. An
effect whose cause never comes (dead-lettered, say) is appended after `max_cause_wait_s`, and
verification then names the missing link.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from libs.bus.handler_errors import TransientFailure
from libs.events.codec import SignedEvent
from libs.ledger import AppendResult, LedgerStore


class CauseNotAppendedYet(TransientFailure):
    retry_after_s = 0.1
    counted = False  # the sink bounds the wait itself (max_cause_wait_s)


@dataclass
class LedgerSink:
    store: LedgerStore
    checkpoint: Callable[[], object]
    checkpoint_every: int = 50
    checkpoint_interval_s: float = 10.0
    max_cause_wait_s: float = 120.0
    appended: int = 0
    clock: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    _last_checkpoint: float = field(default=float("-inf"))
    _sealing: threading.Lock = field(default_factory=threading.Lock)
    _waiting_since: dict[str, float] = field(default_factory=dict)

    def __call__(self, signed: SignedEvent) -> AppendResult:
        """Append; sign a checkpoint after every N appends, or at the first append after a quiet interval."""
        self._require_cause(signed)
        result = self.store.append(signed)
        if result.appended:
            self.appended += 1
            now = self.clock()
            if self.appended % self.checkpoint_every == 0 or now - self._last_checkpoint >= self.checkpoint_interval_s:
                self._seal()
        return result

    def tick(self) -> bool:
        """Seal a checkpoint when an event older than the interval is under none; True when one was sealed."""
        oldest = self._oldest_uncovered()
        if oldest is None or (self.wall_clock() - oldest).total_seconds() < self.checkpoint_interval_s:
            return False
        self._seal()
        return True

    def seal_uncovered(self) -> bool:
        """Seal a checkpoint when any event is under none, however recent (the ledger stopping: the ledger's
        ``on_stop``); True when one was sealed."""
        if self._oldest_uncovered() is None:
            return False
        self._seal()
        return True

    def _oldest_uncovered(self) -> datetime | None:
        last = self.store.latest_checkpoint()
        return self.store.oldest_appended_after(last.position if last else 0)

    def _seal(self) -> None:
        with self._sealing:  # the timer's thread and the consumer's never fold the same range twice
            self.checkpoint()
            self._last_checkpoint = self.clock()

    def _require_cause(self, signed: SignedEvent) -> None:
        meta = signed.event.meta
        if meta.causation_id is None or self.store.event(meta.causation_id) is not None:
            self._waiting_since.pop(meta.event_id, None)
            return
        first_seen = self._waiting_since.setdefault(meta.event_id, self.clock())
        if self.clock() - first_seen < self.max_cause_wait_s:
            raise CauseNotAppendedYet(f"{meta.event_type} {meta.event_id} waits for its cause {meta.causation_id}")
        self._waiting_since.pop(meta.event_id, None)
