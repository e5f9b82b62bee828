"""A batch's commit running in a thread of its own while the consumer handles the next batch.

The MCL path spends a fifth of its time committing a batch (the mirror's rows, the change log, the counts and the
offsets, one SQLite transaction), most of it in SQLite with the interpreter's lock released. Handled in step, the
next batch waits for it; behind, the two overlap. An input that offers it (:class:`SettleBehind`) reads what is in
flight as if it were stored, so the next batch sees the state it would have seen.

What stays true:

- One commit is in flight at a time, and they end in the order they began: the next batch's commit begins only
  once the one before has ended, and only after that batch's first events and dead letters are on the bus.
- The group's Kafka offsets may run one batch ahead of the input's stored offsets, never more. The input's stored
  offsets decide where a restarted or reassigned consumer resumes (``libs/bus/resume_listener.py``), so a crash
  with a commit in flight reads that batch again. A partition the input has stored no offset for yet is settled in
  step: there the group's committed offset would decide, and it must not be past what is stored. A rebalance waits
  for the commit in flight before the partitions are given up.
- A failed commit is met when the next batch has been handled, before anything of it is published: the input
  drops what its store does not hold (``reload``), and the partitions are rewound to the first record of the batch
  whose commit failed and of the batch just handled, which are then read again. While the input cannot read its
  state again, every batch fails before it is handled, and is read again after a pause.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from libs.bus.external_input import ExternalRecord, RecordVerdict, SettleBehind

log = logging.getLogger("modelguard.bus")


class CommitBehind:
    """The commit in flight of one external input's batches, and the partitions whose offsets its store holds."""

    def __init__(
        self, settle: SettleBehind, stored_offsets: Callable[[], Mapping[tuple[str, int], int]], name: str
    ) -> None:
        self._settle = settle
        self._stored_offsets = stored_offsets
        self._name = name
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"{name}-commit")
        self._running: asyncio.Future[None] | None = None
        self._records: Sequence[ExternalRecord] = ()
        self._stored: set[tuple[str, int]] = set()
        self._reload_owed = False

    def may_go_behind(self, records: Sequence[ExternalRecord]) -> bool:
        """True when the store holds an offset for every partition of ``records`` (else they settle in step).
        Called with no commit in flight."""
        partitions = {(record.position.topic, record.position.partition) for record in records}
        if partitions <= self._stored:
            return True
        self._stored = set(self._stored_offsets())
        return partitions <= self._stored

    def begin(self, verdicts: Sequence[RecordVerdict], records: Sequence[ExternalRecord]) -> None:
        """Take the batch's settlement aside and start its commit. Called with no commit in flight."""
        assert self._running is None, "a commit is in flight already"
        commit = self._settle.begin(verdicts)
        self._records = records
        self._running = asyncio.wrap_future(self._executor.submit(commit))

    async def ended(self) -> Sequence[ExternalRecord]:
        """Wait for the commit in flight; the records it did not settle when it failed (the input has dropped
        what its store does not hold), else none. Call it only while no batch is being handled."""
        running, records = self._running, self._records
        self._running, self._records = None, ()
        if running is None:
            return ()
        try:
            await running
        except Exception:  # the store's failure, or a bug: either way nothing of the batch is known to be stored
            log.exception("%s: committing a batch of %d records failed; it is read again", self._name, len(records))
            self._reload_owed = True
            try:
                await self.reloaded()
            except Exception:
                log.exception("%s: reading its state again failed; tried again before the next batch", self._name)
            return records
        return ()

    async def reloaded(self) -> None:
        """After a failed commit: the input's state read again from its store before anything more is handled;
        raises while that fails (the batch in hand then fails, and is read again after a pause)."""
        if self._reload_owed:
            await asyncio.to_thread(self._settle.reload)
            self._reload_owed = False

    async def quiet(self) -> None:
        """Wait until no commit is in flight, whatever its end (met later by :meth:`ended`)."""
        running = self._running
        if running is not None:
            await asyncio.wait([running])

    def close(self) -> None:
        """No new commit; the one in flight ends in its thread."""
        self._executor.shutdown(wait=False)
