"""Where the metadata mirror persists: the port, and the rows that cross it.

What a store keeps (one transaction per :meth:`MirrorStore.write`, so state, change log and consumer offsets are
committed together or not at all):

- the latest value of every mirrored aspect in DataHub's JSON form, keyed (urn, aspect), and for indexed
  aspects what the mirror derived from it (``facts``: a restart rebuilds the indexes without decoding every
  aspect again);
- the next offset to consume per (topic, partition);
- ``meta``: small values (what the mirror was bootstrapped from, the facts format);
- counters, incremented in the write transaction (the intake's records by outcome: exact with any number of
  replicas, since each increment commits with the offsets of the records it counts);
- the change log: the newest changes of the aspects a diagnosis reads (:class:`ChangeRow`), bounded, each
  change once per (urn, aspect, change key);
- the fingerprints of the upstream risks already reported;
- a feed of the keys each write changed, for the other replicas sharing the store (:meth:`MirrorStore.changed_since`):
  each replica keeps in-memory indexes, and a write by one must reach the others' indexes.

Two stores: SQLite (:mod:`mirror_store_sqlite`, the default, one process) and PostgreSQL
(:mod:`mirror_store_postgres`, for several replicas of the context service); :func:`open_mirror_store` picks one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

MIRROR_FILE_NAME = "mirror.sqlite"
DEFAULT_MAX_CHANGES = 20_000

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class StoredAspect:
    urn: str
    aspect_name: str
    entity_type: str
    json: str
    facts: str | None = None


@dataclass(frozen=True)
class ChangeRow:
    """One change of an aspect a diagnosis reads, with its previous value (JSON texts)."""

    entity_urn: str
    entity_type: str
    aspect: str
    change_type: str
    time_ms: int | None
    actor: str | None
    previous: str | None
    current: str | None
    change_key: str

    def values(self) -> tuple[object, ...]:
        """The fields in column order (``entity_urn`` … ``change_key``)."""
        return (
            *(self.entity_urn, self.entity_type, self.aspect, self.change_type, self.time_ms, self.actor),
            *(self.previous, self.current, self.change_key),
        )


@dataclass(frozen=True)
class FeedEntry:
    """A key another replica changed: an aspect (``aspect_name`` set) or a whole entity deleted (None)."""

    seq: int
    urn: str
    aspect_name: str | None


@dataclass(frozen=True)
class FeedPage:
    """What other writers changed after a feed position, and the position to ask from next time."""

    position: int
    entries: list[FeedEntry]


@dataclass(frozen=True)
class MirrorWrite:
    """One transaction: entity deletes first, then aspect deletes, then upserts; offsets, meta, changes with them.

    ``feed``: the keys other replicas must re-read (indexed and timeseries aspects, deleted entities).
    """

    upserts: Sequence[StoredAspect] = ()
    deletes: Sequence[tuple[str, str]] = ()
    deleted_entities: Sequence[str] = ()
    offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    meta: Mapping[str, str] = field(default_factory=dict)
    changes: Sequence[ChangeRow] = ()
    seen_fingerprints: Sequence[tuple[str, str]] = ()
    """(fingerprint, remembered at) of risks reported."""
    counter_increments: Mapping[str, int] = field(default_factory=dict)
    feed: Sequence[tuple[str, str | None]] = ()


class MirrorStore(Protocol):
    shared: bool
    """True when other processes may write the same store (PostgreSQL): the mirror then follows the feed."""

    def aspect_json(self, urn: str, aspect_name: str) -> str | None: ...

    def stored_aspect(self, urn: str, aspect_name: str) -> StoredAspect | None: ...

    def all_aspects(self, aspect_names: Iterable[str] | None = None) -> Iterator[StoredAspect]:
        """Every stored aspect (optionally only the named ones)."""
        ...

    def aspect_count(self) -> int: ...

    def offsets(self) -> dict[TopicPartition, int]: ...

    def meta(self, key: str) -> str | None: ...

    def counters(self) -> dict[str, int]: ...

    def recent_changes(self) -> list[ChangeRow]:
        """The change log, oldest first (at most the store's ``max_changes`` newest)."""
        ...

    def seen(self, fingerprint: str) -> bool: ...

    def feed_position(self) -> int:
        """The newest feed entry now (0 when there is none)."""
        ...

    def changed_since(self, seq: int) -> FeedPage | None:
        """Feed entries after ``seq`` written by other writers; None when entries after ``seq`` were pruned."""
        ...

    def write(self, batch: MirrorWrite) -> None: ...

    def close(self) -> None: ...
