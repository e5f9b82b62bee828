"""Relationship edges, derived from the ``Relationship`` annotations of the SDK's Avro schemas.

DataHub declares every graph edge in its PDL models with ``@Relationship``; the generated Avro schemas
shipped in acryl-datahub (``datahub/metadata/schemas/*.avsc``, parsed into each aspect class's
``RECORD_SCHEMA``) keep the annotation as a field property. Nothing here is a hand-written list: for
each aspect the schema is walked, every annotation is turned into a :class:`RelationshipSpec` (the path
of the urn inside the aspect, the relationship name, ``isLineage``, ``isUpstream``, target entity types),
and :func:`edges_from_aspect` walks an aspect value along those paths.

Annotation shapes handled:

- on a string field: ``{"name": ..., "entityTypes": [...], ...}``;
- on an array / map / record field: ``{"/*": {...}}``, ``{"/*/destinationUrn": {...}}``,
  ``{"/tags/*/tag": {...}}`` (paths relative to the field; ``*`` = array item or map value);
- inside nested records (``upstreams/*/dataset``) and unions (a union member is a path segment named
  after the member, e.g. ``/*/string``; an optional field's ``["null", T]`` union adds no segment).

Direction: ``isUpstream`` (default true) says whether the destination is upstream of the entity that
declares the edge. ``Produces``, ``MemberOf``, ``UsedBy`` and ``DataProcessInstanceProduces`` carry
``isUpstream: false``: their destination is downstream.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import avro.schema
from avrogen.dict_wrapper import DictWrapper
from datahub.emitter.aspect import ASPECT_MAP
from datahub.metadata.schema_classes import _Aspect

_ANY_ITEM = "*"
_PEGASUS_PREFIX = "com.linkedin.pegasus2avro."
_RESTLI_PREFIX = "com.linkedin."


@dataclass(frozen=True)
class RelationshipSpec:
    """One ``Relationship`` annotation of one aspect."""

    aspect_name: str
    path: tuple[str, ...]
    name: str
    is_lineage: bool
    is_upstream: bool
    entity_types: tuple[str, ...]
    via_path: tuple[str, ...] | None = None

    @property
    def field_path(self) -> str:
        return "/".join(self.path)


@dataclass(frozen=True)
class Edge:
    """One relationship instance: ``source`` (the aspect's entity) -relationship-> ``destination``."""

    source: str
    destination: str
    relationship: str
    is_lineage: bool
    destination_is_upstream: bool
    aspect_name: str
    field_path: str
    via: str | None = None

    @property
    def declared_in(self) -> str:
        """``aspect.field`` label, e.g. ``mlModelProperties.deployments`` or ``upstreamLineage.upstreams[].dataset``."""
        field = self.field_path.removesuffix("/*").replace("/*/", "[].").replace("/", ".")
        return f"{self.aspect_name}.{field}"


@cache
def relationship_specs(aspect_name: str) -> tuple[RelationshipSpec, ...]:
    """The relationship annotations of one aspect (empty for unknown aspects)."""
    aspect_class = ASPECT_MAP.get(aspect_name)
    if aspect_class is None:
        return ()
    return tuple(_specs_in_record(aspect_name, aspect_class.RECORD_SCHEMA, (), frozenset()))


def relationship_table() -> tuple[RelationshipSpec, ...]:
    """Every relationship annotation of every aspect the SDK knows, ordered by aspect and path."""
    specs = (spec for aspect_name in sorted(ASPECT_MAP) for spec in relationship_specs(aspect_name))
    return tuple(sorted(specs, key=lambda spec: (spec.aspect_name, spec.path, spec.name)))


def edges_from_aspect(urn: str, aspect_name: str, aspect: _Aspect) -> list[Edge]:
    """Every edge an aspect value declares, in schema-path then value order (duplicates removed)."""
    edges: dict[Edge, None] = {}
    for spec in relationship_specs(aspect_name):
        for destination, via in _destinations(aspect, spec):
            edge = Edge(
                source=urn,
                destination=destination,
                relationship=spec.name,
                is_lineage=spec.is_lineage,
                destination_is_upstream=spec.is_upstream,
                aspect_name=aspect_name,
                field_path=spec.field_path,
                via=via,
            )
            edges[edge] = None
    return list(edges)


# --- deriving specs from the Avro schema -------------------------------------------------------------


def _specs_in_record(
    aspect_name: str, record: avro.schema.RecordSchema, prefix: tuple[str, ...], seen: frozenset[str]
) -> Iterator[RelationshipSpec]:
    if record.fullname in seen:
        return
    seen = seen | {record.fullname}
    for field in record.fields:
        path = (*prefix, field.name)
        annotation = field.props.get("Relationship")
        declared = list(_specs_from_annotation(aspect_name, path, annotation)) if annotation else []
        yield from declared
        # A path-keyed annotation on a field overrides the annotation of the nested field it points at
        # (PDL annotation override), e.g. schemaField globalTags "/tags/*/tag" -> SchemaFieldTaggedWith.
        overridden = {spec.path for spec in declared}
        for nested in _specs_in_type(aspect_name, field.type, path, seen):
            if nested.path not in overridden:
                yield nested


def _specs_in_type(
    aspect_name: str, schema: avro.schema.Schema, path: tuple[str, ...], seen: frozenset[str]
) -> Iterator[RelationshipSpec]:
    if isinstance(schema, avro.schema.RecordSchema):
        yield from _specs_in_record(aspect_name, schema, path, seen)
    elif isinstance(schema, avro.schema.ArraySchema):
        yield from _specs_in_type(aspect_name, schema.items, (*path, _ANY_ITEM), seen)
    elif isinstance(schema, avro.schema.MapSchema):
        yield from _specs_in_type(aspect_name, schema.values, (*path, _ANY_ITEM), seen)
    elif isinstance(schema, avro.schema.UnionSchema):
        members = [member for member in schema.schemas if member.type != "null"]
        optional = len(members) == 1 and len(schema.schemas) == 2
        for member in members:
            member_path = path if optional else (*path, _union_member_name(member))
            yield from _specs_in_type(aspect_name, member, member_path, seen)


def _specs_from_annotation(
    aspect_name: str, field_path: tuple[str, ...], annotation: Any
) -> Iterator[RelationshipSpec]:
    if not isinstance(annotation, Mapping):
        return
    if "name" in annotation:
        yield _spec(aspect_name, field_path, annotation)
        return
    for relative_path, nested in annotation.items():
        if isinstance(relative_path, str) and relative_path.startswith("/") and isinstance(nested, Mapping):
            segments = tuple(segment for segment in relative_path.split("/") if segment)
            yield _spec(aspect_name, (*field_path, *segments), nested)


def _spec(aspect_name: str, path: tuple[str, ...], annotation: Mapping[str, Any]) -> RelationshipSpec:
    via = annotation.get("via")
    return RelationshipSpec(
        aspect_name=aspect_name,
        path=path,
        name=str(annotation["name"]),
        is_lineage=bool(annotation.get("isLineage", False)),
        is_upstream=bool(annotation.get("isUpstream", True)),
        entity_types=tuple(annotation.get("entityTypes", ())),
        via_path=tuple(segment for segment in via.split("/") if segment) if isinstance(via, str) else None,
    )


def _union_member_name(member: avro.schema.Schema) -> str:
    if isinstance(member, avro.schema.NamedSchema):
        return _restli_name(member.fullname)
    return str(member.type)


def _restli_name(fullname: str) -> str:
    if fullname.startswith(_PEGASUS_PREFIX):
        return _RESTLI_PREFIX + fullname[len(_PEGASUS_PREFIX) :]
    return fullname


# --- walking aspect values ---------------------------------------------------------------------------


def _destinations(aspect: _Aspect, spec: RelationshipSpec) -> Iterator[tuple[str, str | None]]:
    shared = _shared_prefix_length(spec.path, spec.via_path) if spec.via_path else len(spec.path)
    for anchor in _values_at(aspect, spec.path[:shared]):
        via = None
        if spec.via_path:
            via = next((value for value in _values_at(anchor, spec.via_path[shared:]) if value), None)
        for destination in _values_at(anchor, spec.path[shared:]):
            if isinstance(destination, str) and destination:
                yield destination, via if isinstance(via, str) else None


def _shared_prefix_length(path: tuple[str, ...], other: tuple[str, ...]) -> int:
    length = 0
    for left, right in zip(path, other, strict=False):
        if left != right:
            break
        length += 1
    return min(length, len(path) - 1)


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
    elif isinstance(value, DictWrapper):
        if _is_union_member(value, segment):
            yield from _values_at(value, rest)
        else:
            yield from _values_at(value.get(segment), rest)
    elif _is_primitive_member(value, segment):
        yield from _values_at(value, rest)


def _is_union_member(value: DictWrapper, segment: str) -> bool:
    return _restli_name(value.RECORD_SCHEMA.fullname) == segment


def _is_primitive_member(value: Any, segment: str) -> bool:
    return (segment == "string" and isinstance(value, str)) or (
        segment in {"int", "long"} and isinstance(value, int) and not isinstance(value, bool)
    )
