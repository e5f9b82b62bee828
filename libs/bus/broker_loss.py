"""Noticing that the broker behind a running consumer is a new one, and resuming from what is committed there.

A consumer keeps its positions in memory. When the broker it talks to is replaced by an empty one at the
same address (an in-memory broker restarted, a cluster rebuilt), those positions belong to the dead broker:
fetching from them skips every record the new broker receives below them, and acknowledging commits them
into the new broker's group. Two signs show it, checked every few seconds per assigned partition:

- the position is beyond the partition's end (the new broker holds fewer records than we have read);
- the group's committed offset went backwards or vanished since the last check (the new broker never saw
  our commits).

Either way the consumer seeks to the offset committed on the broker now (or the beginning without one, or
when that too lies beyond the end).

The end is the larger of the broker's answer to a ListOffsets request and the high watermark of the consumer's
last fetch: the embedded broker (Tansu) answers ListOffsets with the base offset of the partition's last record
batch plus one, so a producer that batches records would look like a new broker to every consumer that read the
whole batch. On a new broker the fetch watermark may be the old broker's still; the committed offset going
backwards (the new broker never saw our commits) tells that case. Records read twice are harmless: every service
remembers the inputs it
handled (``processed_inputs``) and sends their outputs again instead of redoing them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiokafka.errors import KafkaError

log = logging.getLogger("modelguard.bus")


class PartitionConsumer(Protocol):
    def assignment(self) -> set[Any]: ...
    async def end_offsets(self, partitions: list[Any]) -> dict[Any, int]: ...
    async def position(self, partition: Any) -> int: ...
    async def committed(self, partition: Any) -> int | None: ...
    def seek(self, partition: Any, offset: int) -> None: ...
    async def seek_to_beginning(self, *partitions: Any) -> bool: ...


@dataclass(frozen=True)
class Resumed:
    partition: str
    position: int
    end: int
    resumed_at: int
    why: str


@dataclass
class BrokerLossWatch:
    """Per consumer, the committed offsets seen at the last check."""

    seen_committed: dict[Any, int] = field(default_factory=dict)

    async def check(self, consumer: PartitionConsumer, timeout_s: float = 5.0) -> list[Resumed]:
        partitions = sorted(consumer.assignment(), key=lambda tp: (tp.topic, tp.partition))
        if not partitions:
            return []
        ends = await asyncio.wait_for(consumer.end_offsets(partitions), timeout_s)
        resumed: list[Resumed] = []
        for tp in partitions:
            position = await asyncio.wait_for(consumer.position(tp), timeout_s)
            committed = await asyncio.wait_for(consumer.committed(tp), timeout_s)
            end = max(ends[tp], _fetched_end(consumer, tp))
            before = self.seen_committed.get(tp)
            why = None
            if position > end:
                why = f"position {position} beyond the end {end}"
            elif before is not None and (committed is None or committed < before):
                why = f"committed offset went from {before} to {committed}"
            if why is None:
                if committed is not None:
                    self.seen_committed[tp] = committed
                continue
            if committed is not None and committed <= end:
                consumer.seek(tp, committed)
                target = committed
            else:
                await consumer.seek_to_beginning(tp)
                target = 0
            self.seen_committed[tp] = target  # the new broker's commits grow from here
            resumed.append(Resumed(f"{tp.topic}/{tp.partition}", position, end, target, why))
        return resumed


def _fetched_end(consumer: PartitionConsumer, partition: Any) -> int:
    """The high watermark the broker reported with the consumer's last fetch of the partition (0 when none yet)."""
    highwater = getattr(consumer, "highwater", None)
    value = highwater(partition) if callable(highwater) else None
    return value if isinstance(value, int) else 0


async def watch_for_broker_loss(
    consumers: Callable[[], Iterable[PartitionConsumer | None]], every_s: float, service: str
) -> None:
    """Check every consumer every ``every_s`` seconds for as long as the service runs; a broker that does not
    answer is skipped quietly (its client logs that) and checked again next time."""
    watches: dict[int, BrokerLossWatch] = {}
    while True:
        await asyncio.sleep(every_s)
        for consumer in consumers():
            if consumer is None:
                continue
            watch = watches.setdefault(id(consumer), BrokerLossWatch())
            try:
                resumed = await watch.check(consumer)
            except (KafkaError, TimeoutError, OSError):
                continue
            for item in resumed:
                log.warning(
                    "%s: a new broker? %s (%s): resuming %s from offset %d",
                    service,
                    item.partition,
                    item.why,
                    item.partition,
                    item.resumed_at,
                )
