"""Appending a batch: one transaction under the writers' lock, heads carried in memory, one multi-row insert.

The common append reads one thing before it writes: where the ledger ends, to learn whether another writer
appended since this one did (`head_cache`). Repeats are left to the database: an event id is unique within its
incident (and so everywhere: the id is a digest over its incident), so an event already stored fails the insert, and
the batch is then tried again reading everything it needs (which of its events are stored, every incident's head)
from the database. The same happens when a remembered head turns out wrong: `(incident_id, sequence)` is unique
too. And so an incident the writer does not remember, while its memory is trusted, is taken to start its chain with
this batch, without a read: if it does not (it was appended to before this writer started, or forgotten when the
memory was full), its first row's `(incident_id, 1)` is already held, the insert fails, and the batch is tried again
reading the heads. A chain always starts at sequence 1, so a wrong guess can never commit.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from sqlalchemy.exc import IntegrityError

from libs.events.codec import SignedEvent
from libs.ledger.append_plan import Head, Row, plan_append
from libs.ledger.head_cache import HeadCache
from libs.ledger.rows import AppendResult


class AppendTransaction(Protocol):
    """What an append reads and writes, inside one write transaction that holds the writers' lock."""

    def newest_position(self) -> int:
        """Where the ledger ends: any append moves it. 0 when nothing was ever appended."""
        ...

    def stored(self, events: Sequence[tuple[str, str]]) -> dict[str, AppendResult]:
        """The rows already holding any of these (incident id, event id) (as no-op results), by event id."""
        ...

    def heads(self, incident_ids: Sequence[str]) -> dict[str, Head]:
        """(sequence, hash) of each incident's last event; an incident without events is left out."""
        ...

    def insert(self, rows: Sequence[Row], after: int) -> list[int]:
        """Insert the rows in order (`after`: where the ledger ended, as `newest_position` said); their positions,
        in the same order."""
        ...


class WriterBackend(Protocol):
    def begin(self) -> AbstractContextManager[AppendTransaction]:
        """A write transaction holding the writers' lock; committed when the block ends, rolled back on an error.
        Database errors are raised as SQLAlchemy's (IntegrityError, OperationalError, ...)."""
        ...

    def timestamp(self) -> object:
        """`appended_at` as the backend stores it."""
        ...

    def durability(self) -> tuple[str, str]:
        """(how the database logs writes, when a commit is synced), as the database reports them."""
        ...

    def close(self) -> None: ...


class Appender:
    def __init__(self, backend: WriterBackend) -> None:
        self.backend = backend
        self._heads = HeadCache()
        self._lock = threading.Lock()  # one batch at a time per store: the cache is this writer's

    def append_batch(self, events: Sequence[SignedEvent]) -> list[AppendResult]:
        if not events:
            return []
        with self._lock:
            try:
                return self._attempt(events, checked=False)
            except IntegrityError:  # a repeat, or an incident taken as new that the ledger held: the ledger did
                # not move (its end was read under the lock), so only this batch's heads are in doubt
                self._heads.forget({e.event.meta.incident_id for e in events})
            try:
                return self._attempt(events, checked=True)
            except IntegrityError:  # only a writer that bypassed the lock gets here; its rows are visible now
                self._heads.forget()  # and none of the heads is to be trusted
            return self._attempt(events, checked=True)

    def _attempt(self, events: Sequence[SignedEvent], *, checked: bool) -> list[AppendResult]:
        metas = [e.event.meta for e in events]
        with self.backend.begin() as transaction:
            newest = transaction.newest_position()
            if checked:
                stored = transaction.stored(list({(m.incident_id, m.event_id) for m in metas}))
                heads = transaction.heads(list({m.incident_id for m in metas if m.event_id not in stored}))
            else:
                stored = {}
                incidents = {m.incident_id for m in metas}
                known = self._heads.known(newest, incidents)
                # trusted, the memory leaves out only incidents this writer never appended to: taken as new chains
                heads = transaction.heads(list(incidents)) if known is None else known
            plan = plan_append(events, heads, stored, self.backend.timestamp())
            positions = transaction.insert(plan.rows, newest) if plan.rows else []
        self._heads.learn(heads, positions[-1] if positions else newest)
        return plan.results(positions, stored)

    def close(self) -> None:
        self.backend.close()
