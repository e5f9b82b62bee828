"""What the mirror indexes from one typed aspect: lineage pairs, column pairs, deployments, owners, removal.

Pure functions over SDK objects. Lineage pairs come from the ``Relationship`` annotations
(:func:`libs.datahub.relationships.edges_from_aspect`, ``isLineage`` only) turned into data-flow order
``(upstream, downstream)`` by the annotation's ``isUpstream``; a schemaField endpoint stands for its
dataset at entity level. Column pairs come from ``fineGrainedLineages``
(:func:`libs.datahub.fine_grained.field_edges_from_aspect`); an endpoint that is not a schemaField (a
``DATASET`` upstream type) is the whole dataset, written with the empty field path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from typing import Any

import orjson
from datahub.metadata.schema_classes import MLModelPropertiesClass, OwnershipClass, StatusClass, _Aspect

from libs.datahub.fine_grained import aspects_with_fine_grained_lineage, field_edges_from_aspect
from libs.datahub.mcl.prefilter import lineage_aspects
from libs.datahub.mcl.schema_field_urn import Column, column_of
from libs.datahub.relationships import edges_from_aspect

WHOLE_DATASET = ""
FACTS_FORMAT = f"aspect-facts/1 acryl-datahub/{version('acryl-datahub')}"
"""Persisted facts are reused only when written by the same format and SDK (relationship annotations)."""

LineagePair = tuple[str, str]
ColumnPair = tuple[Column, Column]


@dataclass(frozen=True)
class AspectFacts:
    lineage: tuple[LineagePair, ...] = ()
    column_lineage: tuple[ColumnPair, ...] = ()
    deployments: tuple[str, ...] | None = None
    """From mlModelProperties.deployments (DeployedTo is not lineage in DataHub)."""
    owners: tuple[str, ...] | None = None
    removed: bool | None = None


@cache
def indexed_aspects() -> frozenset[str]:
    """Aspects whose typed value the mirror indexes; every other mirrored aspect is only stored."""
    return lineage_aspects() | aspects_with_fine_grained_lineage() | {"mlModelProperties", "ownership", "status"}


def facts_of(urn: str, aspect_name: str, aspect: _Aspect) -> AspectFacts:
    return AspectFacts(
        lineage=lineage_pairs(urn, aspect_name, aspect),
        column_lineage=column_pairs(urn, aspect_name, aspect),
        deployments=tuple(aspect.deployments or ()) if isinstance(aspect, MLModelPropertiesClass) else None,
        owners=tuple(owner.owner for owner in aspect.owners) if isinstance(aspect, OwnershipClass) else None,
        removed=bool(aspect.removed) if isinstance(aspect, StatusClass) else None,
    )


def lineage_pairs(urn: str, aspect_name: str, aspect: _Aspect) -> tuple[LineagePair, ...]:
    pairs: dict[LineagePair, None] = {}
    for edge in edges_from_aspect(urn, aspect_name, aspect):
        if not edge.is_lineage:
            continue
        source, destination = _entity_of(edge.source), _entity_of(edge.destination)
        pair = (destination, source) if edge.destination_is_upstream else (source, destination)
        if pair[0] != pair[1]:
            pairs[pair] = None
    return tuple(pairs)


def column_pairs(urn: str, aspect_name: str, aspect: _Aspect) -> tuple[ColumnPair, ...]:
    pairs: dict[ColumnPair, None] = {}
    for edge in field_edges_from_aspect(urn, aspect_name, aspect):
        pairs[(_column(edge.upstream), _column(edge.downstream))] = None
    return tuple(pairs)


def _entity_of(urn: str) -> str:
    column = column_of(urn)
    return column[0] if column else urn


def _column(urn: str) -> Column:
    return column_of(urn) or (urn, WHOLE_DATASET)


def facts_to_json(facts: AspectFacts) -> str:
    document: dict[str, Any] = {
        "lineage": facts.lineage,
        "columns": facts.column_lineage,
        "deployments": facts.deployments,
        "owners": facts.owners,
        "removed": facts.removed,
    }
    return orjson.dumps(document).decode()  # compact, as json.dumps with (",", ":") but non-ASCII kept as UTF-8


def facts_from_json(text: str) -> AspectFacts:
    """Inverse of :func:`facts_to_json`; raises ValueError/TypeError/KeyError on a malformed document."""
    document = json.loads(text)
    return AspectFacts(
        lineage=tuple((upstream, downstream) for upstream, downstream in document["lineage"]),
        column_lineage=tuple(
            ((source[0], source[1]), (target[0], target[1])) for source, target in document["columns"]
        ),
        deployments=_optional_tuple(document["deployments"]),
        owners=_optional_tuple(document["owners"]),
        removed=document["removed"],
    )


def _optional_tuple(values: list[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)
