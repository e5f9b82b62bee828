"""What the mirror indexes from one aspect, read from its JSON (DataHub's form) instead of the SDK object.

The same facts as :func:`libs.datahub.mcl.aspect_facts.facts_of` gives for the typed value, in the same
order: lineage pairs along the ``Relationship`` annotations' paths (:func:`libs.datahub.relationships.
relationship_specs`, ``isLineage`` only; a union member is a path segment, and in DataHub's JSON form a
union value is the one-key object ``{"<member>": value}``, so the segment is that key), column pairs from
``fineGrainedLineages``, deployments, owners and removal. ``tests/unit/mcl/test_mcl_aspect_shape.py``
compares the two on DataHub's golden files.

Call it only on JSON that fits the aspect's schema (:func:`libs.datahub.mcl.aspect_shape.fits_schema`, or
the SDK route accepted it): values of the wrong type are then impossible, and absent values read as empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from libs.datahub.fine_grained import aspects_with_fine_grained_lineage
from libs.datahub.mcl.aspect_facts import WHOLE_DATASET, AspectFacts, ColumnPair, LineagePair
from libs.datahub.mcl.schema_field_urn import Column, column_of
from libs.datahub.relationships import relationship_specs

_ANY_ITEM = "*"


def facts_of_json(urn: str, aspect_name: str, aspect_json: dict[str, Any]) -> AspectFacts:
    return AspectFacts(
        lineage=lineage_pairs_of_json(urn, aspect_name, aspect_json),
        column_lineage=column_pairs_of_json(aspect_name, aspect_json),
        deployments=_strings(aspect_json.get("deployments")) if aspect_name == "mlModelProperties" else None,
        owners=_owners(aspect_json) if aspect_name == "ownership" else None,
        removed=aspect_json.get("removed") is True if aspect_name == "status" else None,
    )


@cache
def _lineage_specs(aspect_name: str) -> tuple[tuple[tuple[str, ...], bool], ...]:
    """(path, destination is upstream) of each lineage annotation of the aspect, in the SDK walker's order."""
    return tuple((spec.path, spec.is_upstream) for spec in relationship_specs(aspect_name) if spec.is_lineage)


def lineage_pairs_of_json(urn: str, aspect_name: str, aspect_json: dict[str, Any]) -> tuple[LineagePair, ...]:
    pairs: dict[LineagePair, None] = {}
    source = _entity_of(urn)
    for path, is_upstream in _lineage_specs(aspect_name):
        for destination in _values_at(aspect_json, path):
            if not isinstance(destination, str) or not destination:
                continue
            target = _entity_of(destination)
            pair = (target, source) if is_upstream else (source, target)
            if pair[0] != pair[1]:
                pairs[pair] = None
    return tuple(pairs)


def column_pairs_of_json(aspect_name: str, aspect_json: dict[str, Any]) -> tuple[ColumnPair, ...]:
    if aspect_name not in aspects_with_fine_grained_lineage():
        return ()
    pairs: dict[ColumnPair, None] = {}
    for lineage in _items(aspect_json.get("fineGrainedLineages")):
        if not isinstance(lineage, dict):
            continue
        for upstream in _items(lineage.get("upstreams")):
            for downstream in _items(lineage.get("downstreams")):
                if isinstance(upstream, str) and isinstance(downstream, str):
                    pairs[(_column(upstream), _column(downstream))] = None
    return tuple(pairs)


def _values_at(value: Any, path: tuple[str, ...]) -> Iterator[Any]:
    if value is None:
        return
    if not path:
        yield value
        return
    segment, rest = path[0], path[1:]
    if segment == _ANY_ITEM:
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        for item in items:
            yield from _values_at(item, rest)
    elif isinstance(value, dict):
        yield from _values_at(value.get(segment), rest)


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(item for item in _items(value) if isinstance(item, str))


def _owners(aspect_json: dict[str, Any]) -> tuple[str, ...]:
    owners = (owner.get("owner") for owner in _items(aspect_json.get("owners")) if isinstance(owner, dict))
    return tuple(owner for owner in owners if isinstance(owner, str))


def _entity_of(urn: str) -> str:
    column = column_of(urn)
    return column[0] if column else urn


def _column(urn: str) -> Column:
    return column_of(urn) or (urn, WHOLE_DATASET)
