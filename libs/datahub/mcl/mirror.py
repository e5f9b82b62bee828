"""A metadata mirror fed by MCL events: lineage graph + latest aspects, persisted in a :class:`MirrorStore`.

State:

- the latest value of every mirrored aspect, in a store (SQLite by default, PostgreSQL for replicas:
  :mod:`mirror_store`); pending writes are kept in memory until :meth:`MetadataMirror.flush`, which writes them
  with the consumer offsets, the change log entries and the intake's counts in one transaction;
- in memory, indexes built from the *indexed* aspects only (:func:`libs.datahub.mcl.aspect_facts.indexed_aspects`):
  entity-level lineage (ints), column-level lineage, model deployments, owners and soft-deletion. What an aspect
  contributes is read from its JSON (:mod:`aspect_facts_json`): applying an MCL builds no SDK object. Every
  aspect that reaches :meth:`MetadataMirror.apply` was validated against its SDK class's schema by the decoder.

Applying an MCL: UPSERT-like change types (UPSERT, CREATE, UPDATE, PATCH, RESTATE carry the aspect's full
new value in an MCL) replace the aspect and every edge it declared; DELETE of an aspect removes it and its
edges; DELETE of the key aspect removes the entity; ``status.removed`` flags a soft delete (walks skip
the entity). Timeseries aspects keep the latest by ``timestampMillis``. Detection that compares with the
previous state must read the mirror *before* applying the MCL.

On open, the indexes are rebuilt from the facts persisted beside each indexed aspect (recomputed from the
aspect's JSON when another SDK version wrote them), so a restart resumes from the stored offsets without
re-reading the topic. With a shared store (several replicas), :meth:`MetadataMirror.follow_feed` re-reads what
the other replicas wrote since the last call, so every replica's indexes see every partition's changes.

Writing behind (a store of its own only): :meth:`MetadataMirror.begin_flush` takes the pending changes aside (*in
flight*) and answers the write, which another thread runs while the next changes are applied; reads see pending,
then in flight, then the store. One write is in flight at a time. When it fails, what is not stored is dropped by
:meth:`MetadataMirror.reload`, which reads the indexes again from the store (as a restart would).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from datahub.emitter.aspect import ASPECT_MAP
from datahub.emitter.serialization_helper import pre_json_transform
from datahub.metadata.schema_classes import KEY_ASPECT_NAMES, ChangeTypeClass, _Aspect

from libs.datahub.graph import MetadataGraph
from libs.datahub.mcl.aspect_decode import decode_aspect
from libs.datahub.mcl.aspect_facts import (
    FACTS_FORMAT,
    AspectFacts,
    facts_from_json,
    facts_to_json,
    indexed_aspects,
)
from libs.datahub.mcl.aspect_facts_json import facts_of_json
from libs.datahub.mcl.column_lineage_index import ColumnLineageIndex
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.events import DecodedMcl
from libs.datahub.mcl.impact import Impact, ImpactReport
from libs.datahub.mcl.lineage_index import LineageIndex
from libs.datahub.mcl.mirror_impact import ModelFacts, impact_report
from libs.datahub.mcl.mirror_store import ChangeRow, MirrorStore, MirrorWrite, StoredAspect, TopicPartition
from libs.datahub.mcl.mirror_store_sqlite import SqliteMirrorStore
from libs.datahub.mcl.prefilter import mirrored_aspects
from libs.datahub.mcl.schema_field_urn import simple_field_path
from libs.datahub.mcl.strict_json import parse_strict_json
from libs.datahub.mcp_file import AspectRecord

BOOTSTRAP_META_KEY = "bootstrapped_from"
FACTS_META_KEY = "facts_format"
BOOTSTRAP_FLUSH_EVERY = 20_000

Applied = Literal["applied", "older-timeseries-run", "not-mirrored"]
"""What :meth:`MetadataMirror.apply` did: applied, or skipped on purpose and why."""


@cache
def timeseries_aspects() -> frozenset[str]:
    return frozenset(name for name, cls in ASPECT_MAP.items() if cls.get_aspect_type() == "timeseries")


@cache
def followed_aspects() -> frozenset[str]:
    """Aspects whose changes other replicas must re-read: what the in-memory indexes hold."""
    return (indexed_aspects() | timeseries_aspects()) & mirrored_aspects()


class MetadataMirror:
    def __init__(self, store: MirrorStore) -> None:
        self._store = store
        self._lineage = LineageIndex()
        self._columns = ColumnLineageIndex()
        self._deployments: dict[str, tuple[str, ...]] = {}
        self._owners: dict[str, tuple[str, ...]] = {}
        self._timeseries_millis: dict[tuple[str, str], int] = {}
        self._pending: dict[tuple[str, str], StoredAspect | None] = {}
        self._pending_entity_deletes: dict[str, None] = {}
        self._in_flight: _InFlight | None = None
        self._writing = threading.RLock()
        """Held while a write runs: a write begun behind, or a flush."""
        self._feed_position = store.feed_position()
        self.load_warnings: list[str] = []
        self._load()

    @classmethod
    def open(cls, path: Path | str) -> MetadataMirror:
        """Open the mirror persisted in SQLite at ``path`` (a ``mirror.sqlite`` file or a folder for one)."""
        return cls(SqliteMirrorStore.open(path))

    @classmethod
    def in_memory(cls) -> MetadataMirror:
        return cls(SqliteMirrorStore.in_memory())

    @property
    def store(self) -> MirrorStore:
        return self._store

    def close(self) -> None:
        """Pending changes written, then the store closed; a write in flight that failed is dropped (what it
        held comes again from the stored offsets)."""
        if not self.write_in_flight:
            self.flush()
        self._store.close()

    # --- bootstrap -------------------------------------------------------------------------------------

    @property
    def bootstrapped_from(self) -> str | None:
        return self._store.meta(BOOTSTRAP_META_KEY)

    @property
    def needs_bootstrap(self) -> bool:
        """True on first start: never bootstrapped, nothing consumed, nothing stored."""
        return self.bootstrapped_from is None and not self._store.offsets() and self._store.aspect_count() == 0

    def bootstrap(self, records: Iterable[AspectRecord], source: str) -> int:
        """Load typed aspect records (e.g. a file provider's); returns how many mirrored aspects were kept."""
        return self.bootstrap_json(
            (
                (record.urn, record.entity_type, record.aspect_name, pre_json_transform(record.aspect.to_obj()))
                for record in records
                if record.aspect_name in mirrored_aspects()
            ),
            source,
        )

    def bootstrap_json(self, aspects: Iterable[tuple[str, str, str, dict[str, Any]]], source: str) -> int:
        """Load (urn, entity type, aspect name, aspect JSON) of aspects already validated (SDK objects re-encoded,
        or checked by the decoder), in transactions of :data:`BOOTSTRAP_FLUSH_EVERY`; returns how many were kept."""
        kept = 0
        for urn, entity_type, aspect_name, aspect_json in aspects:
            if self._upsert(urn, entity_type, aspect_name, aspect_json, None) == "applied":
                kept += 1
                if len(self._pending) >= BOOTSTRAP_FLUSH_EVERY:
                    self.flush()
        self.flush(meta={BOOTSTRAP_META_KEY: source})
        return kept

    def bootstrap_from_graph(self, graph: MetadataGraph, source: str) -> int:
        """Load the latest aspects of a :class:`MetadataGraph` (the latest run of each timeseries aspect)."""
        return self.bootstrap(_latest_records(graph), source)

    # --- applying MCLs ---------------------------------------------------------------------------------

    def apply(self, mcl: DecodedMcl) -> Applied:
        """Apply one decoded (validated) MCL to the mirror's pending state."""
        if mcl.aspect_name is None:
            return "not-mirrored"
        if mcl.change_type == ChangeTypeClass.DELETE:
            if mcl.aspect_name in KEY_ASPECT_NAMES:
                self._delete_entity(mcl.urn)
            else:
                self._delete_aspect(mcl.urn, mcl.aspect_name)
            return "applied"
        if mcl.aspect_json is None:
            return "not-mirrored"
        return self._upsert(mcl.urn, mcl.entity_type, mcl.aspect_name, mcl.aspect_json, mcl.aspect_text)

    def flush(
        self,
        offsets: Mapping[TopicPartition, int] | None = None,
        meta: Mapping[str, str] | None = None,
        changes: Sequence[ChangeRow] = (),
        seen_fingerprints: Sequence[tuple[str, str]] = (),
        counter_increments: Mapping[str, int] | None = None,
    ) -> None:
        """Persist pending changes and, in the same transaction, the next offset to consume per partition, meta
        values, change log entries, reported risks and counter increments. Pending changes stay pending when the
        write fails. Refused while a write begun behind has not stored what it took aside (it would land after)."""
        if self.write_in_flight:
            raise RuntimeError("a write is in flight: its end comes first")
        with self._writing:
            self._store.write(self._pending_write(offsets, meta, changes, seen_fingerprints, counter_increments))
            self._pending.clear()
            self._pending_entity_deletes.clear()

    def begin_flush(
        self,
        offsets: Mapping[TopicPartition, int],
        changes: Sequence[ChangeRow] = (),
        seen_fingerprints: Sequence[tuple[str, str]] = (),
        counter_increments: Mapping[str, int] | None = None,
    ) -> Callable[[], None]:
        """What :meth:`flush` writes, taken aside now: the answer writes it (in any thread) and raises what the
        store raised. Until it has written, reads see it; a second ``begin_flush`` before it has is refused.
        After it failed, only :meth:`reload` brings the mirror back in step with its store."""
        if self._store.shared:
            raise RuntimeError("a shared store is written in step: other replicas follow what it holds")
        if self.write_in_flight:
            raise RuntimeError("a write is in flight already")
        write = self._pending_write(offsets, None, changes, seen_fingerprints, counter_increments)
        in_flight = _InFlight(self._pending, self._pending_entity_deletes)
        self._in_flight = in_flight  # before pending is emptied: a reader in another thread finds it in one of them
        self._pending, self._pending_entity_deletes = {}, {}

        def run() -> None:
            with self._writing:
                self._store.write(write)
                if self._in_flight is in_flight:
                    self._in_flight = None

        return run

    @property
    def has_pending_changes(self) -> bool:
        """True when changes were applied that no flush has written or taken aside."""
        return bool(self._pending or self._pending_entity_deletes)

    @property
    def write_in_flight(self) -> bool:
        """True from :meth:`begin_flush` until its write has stored what it took aside."""
        return self._in_flight is not None

    def reload(self) -> None:
        """Drop every change not in the store (pending, or in flight when its write failed) and rebuild the
        indexes from the store, as a restart would."""
        with self._writing:
            self._pending, self._pending_entity_deletes = {}, {}
            self._in_flight = None
            self._reset()
            self._feed_position = self._store.feed_position()
            self._load()

    def _pending_write(
        self,
        offsets: Mapping[TopicPartition, int] | None,
        meta: Mapping[str, str] | None,
        changes: Sequence[ChangeRow],
        seen_fingerprints: Sequence[tuple[str, str]],
        counter_increments: Mapping[str, int] | None,
    ) -> MirrorWrite:
        followed = followed_aspects()
        feed: list[tuple[str, str | None]] = []
        if self._store.shared:
            feed = [(urn, None) for urn in self._pending_entity_deletes]
            feed += [key for key in self._pending if key[1] in followed]
        return MirrorWrite(
            upserts=[row for row in self._pending.values() if row is not None],
            deletes=[key for key, row in self._pending.items() if row is None],
            deleted_entities=list(self._pending_entity_deletes),
            offsets=dict(offsets or {}),
            meta=dict(meta or {}),
            changes=changes,
            seen_fingerprints=seen_fingerprints,
            counter_increments=dict(counter_increments or {}),
            feed=feed,
        )

    def meta(self, key: str) -> str | None:
        """A value the last flushes stored under ``key`` (pending meta is written by the next flush)."""
        return self._store.meta(key)

    def committed_offsets(self) -> dict[TopicPartition, int]:
        """Next offset to consume per (topic, partition), as persisted by the last flush."""
        return self._store.offsets()

    def follow_feed(self) -> int:
        """With a shared store: re-index what other replicas wrote since the last call; how many keys changed."""
        if not self._store.shared:
            return 0
        page = self._store.changed_since(self._feed_position)
        if page is None:  # fell behind the pruned feed: start again from the store
            self._reset()
            self._feed_position = self._store.feed_position()
            self._load()
            return -1
        for entry in page.entries:
            if entry.aspect_name is None:
                self._forget_entity(entry.urn)
                continue
            stored = self._store.stored_aspect(entry.urn, entry.aspect_name)
            self._unindex(entry.urn, entry.aspect_name)
            self._timeseries_millis.pop((entry.urn, entry.aspect_name), None)
            if stored is not None:
                self._load_row(stored, reuse_facts=True)
        self._feed_position = page.position
        return len(page.entries)

    # --- reading ---------------------------------------------------------------------------------------

    def aspect_json(self, urn: str, aspect_name: str) -> dict[str, Any] | None:
        text = self._aspect_text(urn, aspect_name)
        if text is None:
            return None
        parsed = parse_strict_json(text, "bad_aspect_json", f"stored aspect {aspect_name} of {urn}")
        return parsed if isinstance(parsed, dict) else None

    def aspect(self, urn: str, aspect_name: str) -> _Aspect | None:
        """The latest value as the SDK's class; raises MclDecodeError if the stored JSON does not decode."""
        aspect_json = self.aspect_json(urn, aspect_name)
        return None if aspect_json is None else decode_aspect(aspect_name, aspect_json).value

    def deployments_of(self, model_urn: str) -> tuple[str, ...]:
        return self._deployments.get(model_urn, ())

    def owners_of(self, urn: str) -> tuple[str, ...]:
        return self._owners.get(urn, ())

    def is_removed(self, urn: str) -> bool:
        node = self._lineage.id_of(urn)
        return node is not None and self._lineage.is_removed(node)

    def downstream_of(self, urn: str) -> tuple[str, ...]:
        """Entities one lineage hop downstream (soft-deleted ones included)."""
        node = self._lineage.id_of(urn)
        if node is None:
            return ()
        return tuple(dict.fromkeys(self._lineage.urn_of(n) for n in self._lineage.downstream(node)))

    def impact_report(self, urn: str, field_paths: Iterable[str] = ()) -> ImpactReport:
        """Models downstream of ``urn`` (field-level from ``field_paths`` where column lineage exists)."""
        facts = ModelFacts(self._deployments, self._owners)
        return impact_report(self._lineage, self._columns, self._schema_paths, facts, urn, field_paths)

    def impacted_models(self, urn: str, field_path: str | None = None) -> list[Impact]:
        return list(self.impact_report(urn, () if field_path is None else (field_path,)).impacts)

    @property
    def entity_count(self) -> int:
        return self._lineage.node_count

    @property
    def edge_count(self) -> int:
        return self._lineage.edge_count

    # --- internals -------------------------------------------------------------------------------------

    def _upsert(
        self, urn: str, entity_type: str, aspect_name: str, aspect_json: dict[str, Any], aspect_text: str | None
    ) -> Applied:
        if aspect_name not in mirrored_aspects():
            return "not-mirrored"
        if aspect_name in timeseries_aspects() and not self._is_newest_run(urn, aspect_name, aspect_json):
            return "older-timeseries-run"
        text = aspect_text if aspect_text is not None else json.dumps(aspect_json, separators=(",", ":"))
        stored_facts = None
        if aspect_name in indexed_aspects():
            facts = facts_of_json(urn, aspect_name, aspect_json)
            self._index(urn, aspect_name, facts)
            stored_facts = facts_to_json(facts)
        self._pending[(urn, aspect_name)] = StoredAspect(urn, aspect_name, entity_type, text, stored_facts)
        return "applied"

    def _is_newest_run(self, urn: str, aspect_name: str, aspect_json: dict[str, Any]) -> bool:
        millis = aspect_json.get("timestampMillis")
        millis = millis if isinstance(millis, int) else 0
        if millis < self._timeseries_millis.get((urn, aspect_name), -1):
            return False
        self._timeseries_millis[(urn, aspect_name)] = millis
        return True

    def _index(self, urn: str, aspect_name: str, facts: AspectFacts) -> None:
        self._lineage.replace(urn, aspect_name, facts.lineage)
        self._columns.replace(urn, aspect_name, facts.column_lineage)
        if facts.deployments is not None:
            self._deployments[urn] = facts.deployments
        if facts.owners is not None:
            self._owners[urn] = facts.owners
        if facts.removed is not None:
            self._lineage.set_removed(urn, facts.removed)

    def _unindex(self, urn: str, aspect_name: str) -> None:
        self._lineage.remove(urn, aspect_name)
        self._columns.remove(urn, aspect_name)
        if aspect_name == "mlModelProperties":
            self._deployments.pop(urn, None)
        elif aspect_name == "ownership":
            self._owners.pop(urn, None)
        elif aspect_name == "status" and self._lineage.id_of(urn) is not None:
            self._lineage.set_removed(urn, False)

    def _delete_aspect(self, urn: str, aspect_name: str) -> None:
        self._unindex(urn, aspect_name)
        self._timeseries_millis.pop((urn, aspect_name), None)
        self._pending[(urn, aspect_name)] = None

    def _delete_entity(self, urn: str) -> None:
        # written first in the transaction: what is pending for the entity went before the delete and goes with it
        for key in [key for key in self._pending if key[0] == urn]:
            del self._pending[key]
        self._forget_entity(urn)
        self._pending_entity_deletes[urn] = None

    def _forget_entity(self, urn: str) -> None:
        self._lineage.remove_entity(urn)
        self._columns.remove_entity(urn)
        self._deployments.pop(urn, None)
        self._owners.pop(urn, None)
        for key in [key for key in self._timeseries_millis if key[0] == urn]:
            del self._timeseries_millis[key]

    def _aspect_text(self, urn: str, aspect_name: str) -> str | None:
        key = (urn, aspect_name)
        if key in self._pending:
            row = self._pending[key]
            return row.json if row is not None else None
        if urn in self._pending_entity_deletes:
            return None
        in_flight = self._in_flight  # read once: its write may end meanwhile, and the store then holds it
        if in_flight is not None:
            if key in in_flight.aspects:
                row = in_flight.aspects[key]
                return row.json if row is not None else None
            if urn in in_flight.entity_deletes:
                return None
        return self._store.aspect_json(urn, aspect_name)

    def _schema_paths(self, dataset_urn: str) -> frozenset[str] | None:
        schema = self.aspect_json(dataset_urn, "schemaMetadata")
        fields = schema.get("fields") if schema else None
        if not isinstance(fields, list):
            return None
        return frozenset(
            simple_field_path(field["fieldPath"])
            for field in fields
            if isinstance(field, dict) and isinstance(field.get("fieldPath"), str)
        )

    def _reset(self) -> None:
        self._lineage = LineageIndex()
        self._columns = ColumnLineageIndex()
        self._deployments.clear()
        self._owners.clear()
        self._timeseries_millis.clear()

    def _load(self) -> None:
        """Rebuild the indexes from the store: persisted facts when this SDK wrote them, else from the JSON."""
        reuse_facts = self._store.meta(FACTS_META_KEY) == FACTS_FORMAT
        for row in self._store.all_aspects(followed_aspects()):
            self._load_row(row, reuse_facts)
        self.flush(meta={FACTS_META_KEY: FACTS_FORMAT})

    def _load_row(self, row: StoredAspect, reuse_facts: bool) -> None:
        try:
            if row.aspect_name in timeseries_aspects():
                self._is_newest_run(row.urn, row.aspect_name, self._parse_stored(row))
            if row.aspect_name in indexed_aspects():
                self._index(row.urn, row.aspect_name, self._stored_facts(row, reuse_facts))
        except MclDecodeError as error:
            self.load_warnings.append(f"stored {row.aspect_name} of {row.urn} is not indexed: {error}")

    def _stored_facts(self, row: StoredAspect, reuse_facts: bool) -> AspectFacts:
        if reuse_facts and row.facts is not None:
            try:
                return facts_from_json(row.facts)
            except (ValueError, TypeError, KeyError, IndexError):
                pass  # recompute below
        facts = facts_of_json(row.urn, row.aspect_name, self._parse_stored(row))
        self._pending[(row.urn, row.aspect_name)] = StoredAspect(
            row.urn, row.aspect_name, row.entity_type, row.json, facts_to_json(facts)
        )
        return facts

    @staticmethod
    def _parse_stored(row: StoredAspect) -> dict[str, Any]:
        parsed = parse_strict_json(row.json, "bad_aspect_json", f"stored {row.aspect_name} of {row.urn}")
        if not isinstance(parsed, dict):
            raise MclDecodeError("bad_aspect_json", f"stored {row.aspect_name} of {row.urn} is not a JSON object")
        return parsed


class _InFlight:
    """Changes taken aside by :meth:`MetadataMirror.begin_flush`, until their write has ended."""

    def __init__(self, aspects: dict[tuple[str, str], StoredAspect | None], entity_deletes: dict[str, None]) -> None:
        self.aspects, self.entity_deletes = aspects, entity_deletes


def _latest_records(graph: MetadataGraph) -> Iterable[AspectRecord]:
    for urn in graph.entity_urns():
        for aspect_name in graph.aspect_names(urn):
            record = graph.aspect(urn, aspect_name)
            if record is None:
                runs = graph.timeseries(urn, aspect_name)
                record = runs[-1] if runs else None
            if record is not None:
                yield record
