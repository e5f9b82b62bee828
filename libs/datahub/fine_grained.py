"""Column-level lineage from ``fineGrainedLineages`` (upstreamLineage, dataJobInputOutput).

The ``Relationship`` annotation on ``upstreamLineage.fineGrainedLineages`` only yields entity-level
``DownstreamOf`` edges from the dataset to the upstream columns; the column-to-column pairs (which
downstream field comes from which upstream field, with transform and confidence) live in the
``FineGrainedLineage`` records themselves and are read here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import avro.schema
from datahub.emitter.aspect import ASPECT_MAP
from datahub.metadata.schema_classes import FineGrainedLineageClass, _Aspect

_FIELD_NAME = "fineGrainedLineages"


@dataclass(frozen=True)
class FieldEdge:
    """``downstream`` (usually a schemaField) is computed from ``upstream``."""

    upstream: str
    downstream: str
    declared_by: str
    aspect_name: str
    transform_operation: str | None
    confidence_score: float | None
    query: str | None


@cache
def aspects_with_fine_grained_lineage() -> frozenset[str]:
    """Aspect names whose schema has a ``fineGrainedLineages`` array of FineGrainedLineage records."""
    target = FineGrainedLineageClass.RECORD_SCHEMA.fullname
    return frozenset(
        name
        for name, aspect_class in ASPECT_MAP.items()
        if any(
            field.name == _FIELD_NAME and _is_array_of(field.type, target)
            for field in aspect_class.RECORD_SCHEMA.fields
        )
    )


def field_edges_from_aspect(urn: str, aspect_name: str, aspect: _Aspect) -> list[FieldEdge]:
    if aspect_name not in aspects_with_fine_grained_lineage():
        return []
    edges: dict[FieldEdge, None] = {}
    for lineage in aspect.get(_FIELD_NAME) or ():
        for upstream in lineage.upstreams or ():
            for downstream in lineage.downstreams or ():
                edge = FieldEdge(
                    upstream=upstream,
                    downstream=downstream,
                    declared_by=urn,
                    aspect_name=aspect_name,
                    transform_operation=lineage.transformOperation,
                    confidence_score=lineage.confidenceScore,
                    query=lineage.query,
                )
                edges[edge] = None
    return list(edges)


def _is_array_of(schema: avro.schema.Schema, record_fullname: str) -> bool:
    if isinstance(schema, avro.schema.UnionSchema):
        return any(_is_array_of(member, record_fullname) for member in schema.schemas)
    return (
        isinstance(schema, avro.schema.ArraySchema)
        and isinstance(schema.items, avro.schema.RecordSchema)
        and schema.items.fullname == record_fullname
    )
