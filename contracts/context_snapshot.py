"""The normalised context snapshot that every DataHub context provider produces.

A provider (MCP JSON files today; the DataHub SDK and the DataHub MCP server later) reads what DataHub
knows around one ML model and returns a :class:`ContextSnapshot`. The snapshot is plain data: frozen,
strict pydantic models, JSON-serialisable, with every collection kept in a canonical order so the same
metadata always gives byte-identical JSON (and therefore the same digest).

Conventions:

- Every urn is a DataHub urn string (``urn:li:...``).
- Times are ISO-8601 strings with an explicit offset (``2024-01-01T00:00:00.000+00:00``).
- ``LineagePath.urns`` is ordered in the direction data flows: the most upstream urn first.
- Collections that are sets are stored sorted and without duplicates; ordered sequences
  (``LineagePath.urns``, ``LineagePath.relationships``) keep their order.

This module is the bottom layer: it imports nothing from ``libs`` or ``services``.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

SNAPSHOT_SCHEMA_VERSION: Literal[1] = 1

_T = TypeVar("_T")


def _check_iso_timestamp(value: str) -> str:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as error:
        raise ValueError(f"not an ISO-8601 timestamp: {value!r}") from error
    if parsed.tzinfo is None:
        raise ValueError(f"timestamp needs an explicit UTC offset: {value!r}")
    return value


def _check_urn(value: str) -> str:
    if not value.startswith("urn:li:"):
        raise ValueError(f"not a DataHub urn: {value!r}")
    return value


def _sorted_unique_strings(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(set(values)))


def _sorted_mapping(mapping: dict[str, _T]) -> dict[str, _T]:
    return dict(sorted(mapping.items()))


IsoTimestamp = Annotated[str, AfterValidator(_check_iso_timestamp)]
Urn = Annotated[str, AfterValidator(_check_urn)]
UrnSet = Annotated[tuple[Urn, ...], AfterValidator(_sorted_unique_strings)]
NameSet = Annotated[tuple[str, ...], AfterValidator(_sorted_unique_strings)]
StrMap = Annotated[dict[str, str], AfterValidator(_sorted_mapping)]
IntMap = Annotated[dict[str, int], AfterValidator(_sorted_mapping)]
FloatMap = Annotated[dict[str, float], AfterValidator(_sorted_mapping)]
OptionalStrMap = Annotated[dict[str, str | None], AfterValidator(_sorted_mapping)]


class _Contract(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, protected_namespaces=())


class Provenance(_Contract):
    """Where one piece of the snapshot came from."""

    provider: str = Field(min_length=1, description='"file", "sdk", "mcp", ...')
    urn: Urn = Field(description="the entity whose aspect was read")
    aspect: str = Field(min_length=1, description="the aspect name, e.g. schemaMetadata")
    fetched_at: IsoTimestamp
    location: str | None = Field(default=None, description="e.g. the MCP JSON file the aspect came from")


class EntityRef(_Contract):
    urn: Urn
    entity_type: str


class ContextEntity(EntityRef):
    """One entity of the context: what it is called, where it lives, which aspects the source had."""

    name: str | None = None
    platform: Urn | None = None
    description: str | None = None
    properties: StrMap = Field(default_factory=dict, description="custom properties of its properties aspect")
    removed: bool = Field(default=False, description="soft-deleted (status.removed)")
    known_aspects: NameSet = Field(default=(), description="aspect names the source holds for the entity")
    provenance: Provenance


class SchemaField(_Contract):
    dataset_urn: Urn
    field_path: str
    field_urn: Urn
    simple_path: str = Field(description="field path without the v2 [version=..]/[type=..] tokens")
    native_type: str
    normalised_type: str = Field(description='DataHub type class, lower case: "number", "string", ...')
    nullable: bool
    is_part_of_key: bool = False
    description: str | None = None
    provenance: Provenance


class Owner(_Contract):
    entity_urn: Urn
    owner_urn: Urn
    type: str = Field(description='ownership type, e.g. "TECHNICAL_OWNER"')
    type_urn: Urn | None = None
    provenance: Provenance


class AssertionSignal(_Contract):
    assertion_urn: Urn
    asserted_entities: UrnSet = Field(description="datasets / data jobs the assertion is about")
    fields: UrnSet = Field(default=(), description="schemaField urns the assertion is about")
    assertion_type: str | None = None
    description: str | None = None
    native_type: str | None = None
    latest_result: str | None = Field(
        default=None, description="SUCCESS / FAILURE / ERROR / INIT of the latest run (worst partition)"
    )
    result_time: IsoTimestamp | None = None
    latest_partition_results: StrMap = Field(
        default_factory=dict, description="partition -> result for the runs at result_time"
    )
    run_count: int = Field(default=0, ge=0)
    provenance: Provenance
    result_provenance: Provenance | None = None


class DatasetProfileSignal(_Contract):
    dataset_urn: Urn
    profiled_at: IsoTimestamp
    partition: str | None = None
    row_count: int | None = None
    column_count: int | None = None
    null_counts: IntMap = Field(default_factory=dict, description="field path -> null count")
    null_proportions: FloatMap = Field(default_factory=dict, description="field path -> null proportion")
    provenance: Provenance


class DataJobContext(_Contract):
    """A data job or a process instance (training run) with what it reads and writes."""

    urn: Urn
    entity_type: str
    name: str | None = None
    flow_urn: Urn | None = None
    input_datasets: UrnSet = ()
    output_datasets: UrnSet = ()
    input_jobs: UrnSet = ()
    provenance: Provenance


class FeatureContext(_Contract):
    urn: Urn
    name: str | None = None
    data_type: str | None = None
    description: str | None = None
    sources: UrnSet = Field(default=(), description="datasets the feature is derived from")
    feature_tables: UrnSet = Field(default=(), description="feature tables that contain the feature")
    provenance: Provenance


class FeatureTableContext(_Contract):
    urn: Urn
    name: str | None = None
    description: str | None = None
    features: UrnSet = ()
    primary_keys: UrnSet = ()
    provenance: Provenance


class ModelGroupContext(_Contract):
    urn: Urn
    name: str | None = None
    description: str | None = None
    training_jobs: UrnSet = ()
    provenance: Provenance


class ModelContext(_Contract):
    urn: Urn
    name: str | None = None
    description: str | None = None
    version: str | None = None
    group_urns: UrnSet = ()
    training_jobs: UrnSet = ()
    downstream_jobs: UrnSet = ()
    feature_urns: UrnSet = ()
    deployment_urns: UrnSet = ()
    deployment_statuses: OptionalStrMap = Field(
        default_factory=dict, description="deployment urn -> status, None when the source has no status"
    )
    hyper_params: StrMap = Field(default_factory=dict)
    training_metrics: StrMap = Field(default_factory=dict)
    provenance: Provenance


class DeploymentContext(_Contract):
    urn: Urn
    name: str | None = None
    platform: Urn | None = None
    status: str | None = None
    model_urns: UrnSet = Field(default=(), description="models whose mlModelProperties.deployments name it")
    linked_via: str = Field(
        default="mlModelProperties.deployments",
        description="deployments are not lineage in DataHub: the aspect field that links them",
    )
    provenance: Provenance


class IncidentSignal(_Contract):
    incident_urn: Urn
    entities: UrnSet
    incident_type: str | None = None
    custom_type: str | None = None
    title: str | None = None
    description: str | None = None
    state: str | None = None
    stage: str | None = None
    priority: int | None = None
    created_at: IsoTimestamp | None = None
    provenance: Provenance


class LineageEdge(_Contract):
    """One relationship instance, as declared by a @Relationship annotation of an aspect."""

    source: Urn = Field(description="the entity whose aspect declares the relationship")
    target: Urn
    relationship: str = Field(description='annotation name, e.g. "DownstreamOf", "Produces"')
    is_lineage: bool
    target_is_upstream: bool = Field(
        description="lineage direction: False for isUpstream=false relationships (Produces, MemberOf, ...)"
    )
    aspect: str
    field_path: str = Field(description='schema path of the urn inside the aspect, e.g. "upstreams/*/dataset"')
    via: Urn | None = Field(default=None, description="e.g. the query urn of an upstreamLineage entry")
    provenance: Provenance


class FieldLineageEdge(_Contract):
    """Column-level lineage from a fineGrainedLineages entry."""

    upstream: Urn = Field(description="usually a schemaField urn")
    downstream: Urn
    declared_by: Urn = Field(description="the entity whose aspect holds the fineGrainedLineages entry")
    transform_operation: str | None = None
    confidence_score: float | None = None
    query: Urn | None = None
    provenance: Provenance


class LineagePath(_Contract):
    """A chain of urns in data-flow order (most upstream first)."""

    direction: Literal["upstream", "downstream", "deployment"] = Field(
        description="how the path was found from the start urn"
    )
    urns: tuple[Urn, ...] = Field(min_length=2)
    relationships: tuple[str, ...] = Field(description="relationships[i] links urns[i] and urns[i + 1]")
    via_lineage: bool = Field(description="False when a hop is not a lineage relationship (DeployedTo)")
    stop_reason: Literal["root", "leaf", "max_hops", "cycle"]

    @model_validator(mode="after")
    def _one_relationship_per_hop(self) -> LineagePath:
        if len(self.relationships) != len(self.urns) - 1:
            raise ValueError("a lineage path needs exactly one relationship per hop")
        return self


class MetadataChange(_Contract):
    """One change DataHub logged around the incident (a MetadataChangeLog record): an aspect before and after."""

    entity_urn: Urn
    entity_type: str
    aspect: str = Field(min_length=1)
    change_type: str
    changed_at: IsoTimestamp | None = None
    actor: Urn | None = None
    previous: dict[str, Any] | None = Field(default=None, description="previousAspectValue, as JSON")
    current: dict[str, Any] | None = Field(default=None, description="aspect, as JSON; None for a delete")
    provenance: Provenance


def _canonical_order(items: tuple[_Contract, ...]) -> tuple[_Contract, ...]:
    unique = {item.model_dump_json(): item for item in items}
    return tuple(unique[key] for key in sorted(unique))


class ContextSnapshot(_Contract):
    """Everything a provider knows around one model, in canonical order."""

    schema_version: Literal[1] = SNAPSHOT_SCHEMA_VERSION
    model_urn: Urn
    provider: str = Field(min_length=1)
    fetched_at: IsoTimestamp
    model: ModelContext | None = Field(default=None, description="None when the source lacks the model")
    entities: tuple[ContextEntity, ...] = ()
    schema_fields: tuple[SchemaField, ...] = ()
    owners: tuple[Owner, ...] = ()
    assertions: tuple[AssertionSignal, ...] = ()
    profiles: tuple[DatasetProfileSignal, ...] = ()
    jobs: tuple[DataJobContext, ...] = ()
    features: tuple[FeatureContext, ...] = ()
    feature_tables: tuple[FeatureTableContext, ...] = ()
    model_groups: tuple[ModelGroupContext, ...] = ()
    deployments: tuple[DeploymentContext, ...] = ()
    incidents: tuple[IncidentSignal, ...] = ()
    edges: tuple[LineageEdge, ...] = ()
    field_lineage: tuple[FieldLineageEdge, ...] = ()
    upstream_paths: tuple[LineagePath, ...] = ()
    downstream_paths: tuple[LineagePath, ...] = Field(
        default=(), description="lineage downstream of the model plus model -> deployment paths"
    )
    changes: tuple[MetadataChange, ...] = Field(
        default=(), description="MetadataChangeLog records of the model and its upstream entities"
    )
    warnings: NameSet = ()

    @field_validator(
        "entities",
        "schema_fields",
        "owners",
        "assertions",
        "profiles",
        "jobs",
        "features",
        "feature_tables",
        "model_groups",
        "deployments",
        "incidents",
        "edges",
        "field_lineage",
        "upstream_paths",
        "downstream_paths",
        "changes",
        mode="after",
    )
    @classmethod
    def _sort_and_deduplicate(cls, items: tuple[Any, ...]) -> tuple[Any, ...]:
        return _canonical_order(items)

    def entity(self, urn: str) -> ContextEntity | None:
        return next((entity for entity in self.entities if entity.urn == urn), None)

    def canonical_json(self) -> str:
        """Compact JSON with sorted keys: the bytes the digest is computed over."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()
