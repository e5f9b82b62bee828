"""An in-memory metadata graph built from decoded aspect records.

- Versioned aspects: the latest record per (urn, aspect) wins (later file, later entry).
- Timeseries aspects (assertionRunEvent, datasetProfile, ...): every record is kept, ordered by
  ``timestampMillis`` (ties keep file order).
- Edges come from the ``Relationship`` annotations of the latest versioned aspects
  (:mod:`libs.datahub.relationships`), with out- and in-adjacency.

Lineage direction (``upstream_of`` / ``downstream_of``) follows the annotations' ``isUpstream`` flag, not
the edge direction: ``upstreamLineage`` on D gives D -DownstreamOf-> U and U is upstream of D;
``dataJobInputOutput`` on J gives J -Consumes-> input (upstream of J) and J -Produces-> output
(``isUpstream: false``, so the output is downstream of J); ``mlModelProperties.groups`` (MemberOf) is
also ``isUpstream: false``. A model's ``mlModelTrainingData`` datasets are upstream of it too
(:mod:`libs.datahub.training_data_edges`). Non-lineage relationships (DeployedTo, Contains, OwnedBy, ...) are never
lineage hops.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from datahub.metadata.schema_classes import StatusClass, _Aspect
from datahub.utilities.urns.urn import guess_entity_type

from libs.datahub.fine_grained import FieldEdge, field_edges_from_aspect
from libs.datahub.mcp_file import AspectRecord
from libs.datahub.relationships import Edge, edges_from_aspect
from libs.datahub.training_data_edges import training_data_edges


@dataclass(frozen=True)
class LineageHop:
    """A lineage neighbour and the edge that makes it one."""

    urn: str
    edge: Edge


class MetadataGraph:
    def __init__(
        self,
        latest: dict[tuple[str, str], AspectRecord],
        timeseries: dict[tuple[str, str], tuple[AspectRecord, ...]],
    ) -> None:
        self._latest = dict(latest)
        self._timeseries = dict(timeseries)
        self._aspect_names: dict[str, set[str]] = defaultdict(set)
        for urn, aspect_name in (*self._latest, *self._timeseries):
            self._aspect_names[urn].add(aspect_name)
        self._edges: list[Edge] = []
        self._field_edges: list[FieldEdge] = []
        self._out: dict[str, list[Edge]] = defaultdict(list)
        self._in: dict[str, list[Edge]] = defaultdict(list)
        for record in self._latest.values():
            declared = edges_from_aspect(record.urn, record.aspect_name, record.aspect)
            for edge in (*declared, *training_data_edges(record.urn, record.aspect_name, record.aspect)):
                self._edges.append(edge)
                self._out[edge.source].append(edge)
                self._in[edge.destination].append(edge)
            self._field_edges.extend(field_edges_from_aspect(record.urn, record.aspect_name, record.aspect))

    @classmethod
    def from_records(cls, records: Iterable[AspectRecord]) -> MetadataGraph:
        latest: dict[tuple[str, str], AspectRecord] = {}
        series: dict[tuple[str, str], list[tuple[int, int, AspectRecord]]] = defaultdict(list)
        for order, record in enumerate(records):
            key = (record.urn, record.aspect_name)
            if record.aspect.get_aspect_type() == "timeseries":
                series[key].append((record.aspect.get("timestampMillis") or 0, order, record))
            else:
                latest.pop(key, None)
                latest[key] = record
        timeseries = {key: tuple(record for *_, record in sorted(items)) for key, items in series.items()}
        return cls(latest, timeseries)

    # --- aspects ---------------------------------------------------------------------------------------

    def aspect(self, urn: str, aspect_name: str) -> AspectRecord | None:
        return self._latest.get((urn, aspect_name))

    def aspect_value(self, urn: str, aspect_name: str) -> _Aspect | None:
        record = self._latest.get((urn, aspect_name))
        return record.aspect if record else None

    def timeseries(self, urn: str, aspect_name: str) -> tuple[AspectRecord, ...]:
        """All records of a timeseries aspect, oldest first."""
        return self._timeseries.get((urn, aspect_name), ())

    def aspect_names(self, urn: str) -> tuple[str, ...]:
        return tuple(sorted(self._aspect_names.get(urn, ())))

    def has_metadata(self, urn: str) -> bool:
        return urn in self._aspect_names

    def entity_urns(self, entity_type: str | None = None) -> tuple[str, ...]:
        urns = self._aspect_names.keys()
        return tuple(sorted(urn for urn in urns if entity_type is None or self.entity_type(urn) == entity_type))

    @staticmethod
    def entity_type(urn: str) -> str:
        return guess_entity_type(urn)

    def is_removed(self, urn: str) -> bool:
        status = self.aspect_value(urn, "status")
        return isinstance(status, StatusClass) and bool(status.removed)

    # --- edges -----------------------------------------------------------------------------------------

    @property
    def edges(self) -> tuple[Edge, ...]:
        return tuple(self._edges)

    @property
    def field_edges(self) -> tuple[FieldEdge, ...]:
        return tuple(self._field_edges)

    def out_edges(self, urn: str, relationship: str | None = None) -> tuple[Edge, ...]:
        return tuple(e for e in self._out.get(urn, ()) if relationship is None or e.relationship == relationship)

    def in_edges(self, urn: str, relationship: str | None = None) -> tuple[Edge, ...]:
        return tuple(e for e in self._in.get(urn, ()) if relationship is None or e.relationship == relationship)

    def upstream_of(self, urn: str) -> tuple[LineageHop, ...]:
        """Entities one lineage hop upstream of ``urn`` (what it is computed from)."""
        hops = [
            LineageHop(e.destination, e) for e in self._out.get(urn, ()) if e.is_lineage and e.destination_is_upstream
        ]
        hops += [
            LineageHop(e.source, e) for e in self._in.get(urn, ()) if e.is_lineage and not e.destination_is_upstream
        ]
        return _unique_hops(hops)

    def downstream_of(self, urn: str) -> tuple[LineageHop, ...]:
        """Entities one lineage hop downstream of ``urn`` (what is computed from it)."""
        hops = [LineageHop(e.source, e) for e in self._in.get(urn, ()) if e.is_lineage and e.destination_is_upstream]
        hops += [
            LineageHop(e.destination, e)
            for e in self._out.get(urn, ())
            if e.is_lineage and not e.destination_is_upstream
        ]
        return _unique_hops(hops)


def _unique_hops(hops: list[LineageHop]) -> tuple[LineageHop, ...]:
    """One hop per neighbour (the first edge found), self-loops removed, ordered by urn."""
    by_urn: dict[str, LineageHop] = {}
    for hop in hops:
        if hop.edge.source != hop.edge.destination:
            by_urn.setdefault(hop.urn, hop)
    return tuple(by_urn[urn] for urn in sorted(by_urn))
