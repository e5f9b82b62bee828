"""Inputs from outside ModelGuard (DataHub's MetadataChangeLog topics): raw bytes in, first events out.

They are not signed envelopes, so they skip envelope verification and the processed-inputs table; each
handler decodes its own bytes as untrusted and answers with the first events of new incidents.

An external input may keep its own offsets beside its state (``stored_offsets``): the runtime then seeks
each assigned partition to the stored offset, so what the input persisted decides where it resumes, not
the group's committed offset. ``settled`` is called once per record after its outcome is on the bus
(first events published, or the dead letter sent), with the record's position: the place to commit state
and offset together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class InputPosition:
    """Where a record was read: topic, partition, offset."""

    topic: str
    partition: int
    offset: int


def _nothing_to_settle(_events: Sequence[FirstEvent], _position: InputPosition) -> None:
    return None


@dataclass(frozen=True)
class ExternalInput:
    name: str
    topics: tuple[str, ...]
    handle: Callable[[bytes, InputPosition], Sequence[FirstEvent]]
    settled: Callable[[Sequence[FirstEvent], InputPosition], None] = field(default=_nothing_to_settle)
    stored_offsets: Callable[[], Mapping[tuple[str, int], int]] | None = None
