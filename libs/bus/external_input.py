"""Inputs from outside ModelGuard (DataHub's MetadataChangeLog topics): raw bytes in, first events out.

They are not signed envelopes, so they skip envelope verification and the processed-inputs table; each
handler decodes its own bytes as untrusted and answers with the first events of new incidents.

An external input may keep its own offsets beside its state (``stored_offsets``): the runtime then seeks
each assigned partition to the stored offset, so what the input persisted decides where it resumes, not
the group's committed offset. ``settled`` is called once per record after its outcome is on the bus
(first events published, or the dead letter sent), with the record's position: the place to commit state
and offset together.

An input may take its records in batches instead (``handle_batch``, the MCL path): the runtime consumes up to
``batch_max_records`` at a time, hands them over in one call, which answers a :class:`RecordVerdict` per record
(first events, or a dead letter), publishes what the verdicts say, then calls ``settle_batch`` once with all of
them (state and offsets in one transaction), and commits the Kafka offsets once. A transient failure stops the
batch at the record that met it (:class:`BatchVerdicts` ``stopped``): the records before it are published and
settled, the partitions are rewound to the first unsettled record, and it is retried after the delivery
policy's backoff (dead-lettered with ``retries-exhausted`` after ``delivery.max_attempts``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from pydantic import BaseModel

BUS_TOPIC_PREFIX = "modelguard."


def read_on_the_bus(topic: str) -> bool:
    """An external input's topic named like ModelGuard's own (``modelguard.…``, such as the MCLs its datahub-actions
    action forwards) is on ModelGuard's bus; any other (DataHub's MCL topics) is on DataHub's Kafka."""
    return topic.startswith(BUS_TOPIC_PREFIX)


@dataclass(frozen=True)
class FirstEvent:
    """The payload of an incident's first event, the incident it opens, and the digest of the raw input."""

    payload: BaseModel
    incident_id: str
    input_digest: str


class InputPosition(NamedTuple):
    """Where a record was read: topic, partition, offset (a tuple: built for every record of every batch)."""

    topic: str
    partition: int
    offset: int


class ExternalRecord(NamedTuple):
    """One record of a batch: where it was read, its bytes and its key."""

    position: InputPosition
    value: bytes
    key: bytes | None = None


@dataclass(frozen=True)
class DeadLetterVerdict:
    """Send the record to the dead-letter topic; ``keep``: the bytes to send instead of the whole record."""

    reason: str
    detail: str = ""
    keep: bytes | None = None


class RecordVerdict(NamedTuple):
    """What one record comes to: first events to publish, or a dead letter (then no first events)."""

    record: ExternalRecord
    firsts: tuple[FirstEvent, ...] = ()
    dead_letter: DeadLetterVerdict | None = None


@dataclass(frozen=True)
class BatchStop:
    """Where a batch stopped: the record whose handling met a transient failure, and the failure."""

    record: ExternalRecord
    failure: Exception


@dataclass(frozen=True)
class BatchVerdicts:
    """The verdicts of the records handled, in order; ``stopped`` when a transient failure ended the batch early
    (the records from ``stopped.record`` on were not handled)."""

    verdicts: list[RecordVerdict]
    stopped: BatchStop | None = None


@dataclass(frozen=True)
class SettleBehind:
    """Settling a batch while the next is handled: ``begin`` takes the batch's settlement aside (the input reads
    it as settled from then on) and answers the commit, which the runtime runs in a thread of its own; after a
    commit failed, ``reload`` drops what the input's store does not hold (the runtime then reads the unsettled
    records again)."""

    begin: Callable[[Sequence[RecordVerdict]], Callable[[], None]]
    reload: Callable[[], None]


def _nothing_to_settle(_events: Sequence[FirstEvent], _position: InputPosition) -> None:
    return None


@dataclass(frozen=True)
class ExternalInput:
    name: str
    topics: tuple[str, ...]
    handle: Callable[[bytes, InputPosition], Sequence[FirstEvent]]
    settled: Callable[[Sequence[FirstEvent], InputPosition], None] = field(default=_nothing_to_settle)
    stored_offsets: Callable[[], Mapping[tuple[str, int], int]] | None = None
    handle_batch: Callable[[Sequence[ExternalRecord]], BatchVerdicts] | None = None
    """When set, records are consumed and handled in batches (``handle`` and ``settled`` are then not used)."""
    settle_batch: Callable[[Sequence[RecordVerdict]], None] | None = None
    batch_max_records: int = 2000
    settle_behind: SettleBehind | None = None
    """With batches: settle each while the next is handled (else ``settle_batch`` settles it before the next)."""
