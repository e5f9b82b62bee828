"""Ledger: every verified event appended once, after its cause, to the incident's hash chain; checkpoints
signed after every N appends, at the first append after a quiet interval, by a timer (`tick`) when an
event older than the interval is under no checkpoint, so an idle ledger's newest events are covered too, and when
the ledger stops gracefully (`seal_uncovered`), so a stopped ledger's are.

The service hands the sink each consumer poll whole (`append_batch`): what can be appended goes in one
transaction, causes placed before their effects whatever order the topics delivered them in.

Events of one incident arrive on several topics, so the ledger can see an effect before its cause. It
refuses to append an effect whose cause is neither in the log nor earlier in the batch: the batch hands it
back (`deferred`), and the runtime delivers it again (its offset is not committed, so nothing is lost) until
the cause is there, which keeps every chain in causal order. An effect whose cause never comes
(dead-lettered, say) is appended after `max_cause_wait_s`, and verification then names the missing link.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from libs.bus.handler_errors import TransientFailure
from libs.events.codec import SignedEvent
from libs.ledger import AppendResult, LedgerStore


class CauseNotAppendedYet(TransientFailure):
    retry_after_s = 0.1
    counted = False  # the sink bounds the wait itself (max_cause_wait_s)


@dataclass(frozen=True)
class BatchAppended:
    appended: list[tuple[SignedEvent, AppendResult]]
    """In the order appended (causes first); a repeat's result names the row that holds it."""
    deferred: list[SignedEvent]
    """Waiting for a cause the ledger does not hold yet, in the order given: to be delivered again."""


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
        """Append one event; raise CauseNotAppendedYet while it waits for its cause."""
        outcome = self.append_batch([signed])
        if outcome.deferred:
            meta = signed.event.meta
            raise CauseNotAppendedYet(f"{meta.event_type} {meta.event_id} waits for its cause {meta.causation_id}")
        return outcome.appended[0][1]

    def append_batch(self, events: Sequence[SignedEvent]) -> BatchAppended:
        """Append what can be, in causal order and one transaction; sign a checkpoint when the batch crosses a
        multiple of N appends, or at the first append after a quiet interval."""
        ready, deferred = self._in_causal_order(events)
        results = self.store.append_batch(ready) if ready else []
        appended = sum(r.appended for r in results)
        if appended:
            before, self.appended = self.appended, self.appended + appended
            crossed = self.appended // self.checkpoint_every > before // self.checkpoint_every
            if crossed or self.clock() - self._last_checkpoint >= self.checkpoint_interval_s:
                self._seal()
        return BatchAppended(list(zip(ready, results, strict=True)), deferred)

    def _in_causal_order(self, events: Sequence[SignedEvent]) -> tuple[list[SignedEvent], list[SignedEvent]]:
        """(what can be appended, causes first; what waits for a cause). An event waits while its cause is neither
        stored nor placed before it, until it has waited `max_cause_wait_s`."""
        in_batch = {e.event.meta.event_id for e in events}
        outside = sorted(
            {(m.incident_id, c) for e in events if (c := (m := e.event.meta).causation_id) and c not in in_batch}
        )
        known = self.store.stored_event_ids(outside) if outside else set()
        ready: list[SignedEvent] = []
        pending = list(events)
        while pending:
            placed = [e for e in pending if e.event.meta.causation_id is None or e.event.meta.causation_id in known]
            if not placed:  # everything left waits: what has waited long enough goes in as an orphan
                now = self.clock()
                placed = [
                    e for e in pending if now - self._waiting_since.setdefault(_id(e), now) >= self.max_cause_wait_s
                ]
                if not placed:
                    break
            going = {_id(e) for e in placed}
            for event_id in going:
                self._waiting_since.pop(event_id, None)
            known |= going
            ready += placed
            pending = [e for e in pending if _id(e) not in going]
        return ready, pending

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


def _id(signed: SignedEvent) -> str:
    return signed.event.meta.event_id
