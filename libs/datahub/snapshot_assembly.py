"""Assemble a :class:`ContextSnapshot` for one model from a :class:`MetadataGraph`.

Provider-independent: any provider that can fill a MetadataGraph (files now; SDK fetches later) gets the
same snapshot shape, the same scope rules and the same warnings.

Scope: the model, every urn on its upstream and downstream lineage paths, what its mlModelProperties
names (features, groups, training and downstream jobs, deployments), and the feature tables that contain
its features. Signals (assertions, incidents) are those touching the scope; schema fields and profiles
are those of the datasets in scope; owners those of every entity in scope.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from contracts.context_snapshot import (
    ContextSnapshot,
    FieldLineageEdge,
    LineageEdge,
    LineagePath,
    ModelContext,
)
from libs.datahub.entity_description import describe_entity, owners_of, schema_fields_of
from libs.datahub.graph import MetadataGraph
from libs.datahub.lineage import (
    DEFAULT_MAX_HOPS,
    DEFAULT_MAX_PATHS,
    DeploymentLinks,
    deployments_of,
    walk_downstream,
    walk_upstream,
)
from libs.datahub.ml_context import (
    JOB_ENTITY_TYPES,
    deployment_context,
    feature_context,
    feature_table_context,
    feature_tables_containing,
    job_context,
    model_context,
    model_group_context,
)
from libs.datahub.provenance import ProvenanceStamp
from libs.datahub.quality_signals import (
    assertion_signals,
    incident_signals,
    profile_signals,
    subject_of,
)


@dataclass(frozen=True)
class WalkLimits:
    max_hops: int = DEFAULT_MAX_HOPS
    max_paths: int = DEFAULT_MAX_PATHS


def assemble_snapshot(
    graph: MetadataGraph,
    model_urn: str,
    stamp: ProvenanceStamp,
    limits: WalkLimits | None = None,
    source_warnings: Iterable[str] = (),
) -> ContextSnapshot:
    limits = limits or WalkLimits()
    upstream = walk_upstream(graph, model_urn, limits.max_hops, limits.max_paths)
    downstream = walk_downstream(graph, model_urn, limits.max_hops, limits.max_paths)
    deployments = deployments_of(graph, model_urn)
    model = model_context(graph, model_urn, stamp)
    scope = _scope(graph, model_urn, model, [*upstream, *downstream], deployments)

    def of_type(*entity_types: str) -> list[str]:
        return sorted(urn for urn in scope if graph.entity_type(urn) in entity_types)

    datasets = of_type("dataset")
    assertions = assertion_signals(graph, scope, stamp)
    incidents = incident_signals(graph, scope, stamp)
    signal_urns = {a.assertion_urn for a in assertions} | {i.incident_urn for i in incidents}
    warnings = [
        *source_warnings,
        *deployments.warnings,
        *_walk_warnings(upstream, "upstream", limits),
        *_walk_warnings(downstream, "downstream", limits),
        *_gap_warnings(graph, model_urn, model, upstream, scope, deployments),
    ]
    return ContextSnapshot(
        model_urn=model_urn,
        provider=stamp.provider,
        fetched_at=stamp.fetched_at,
        model=model,
        entities=tuple(describe_entity(graph, urn, stamp) for urn in sorted(scope)),
        schema_fields=tuple(field for urn in datasets for field in schema_fields_of(graph, urn, stamp)),
        owners=tuple(owner for urn in sorted(scope) for owner in owners_of(graph, urn, stamp)),
        assertions=tuple(assertions),
        profiles=tuple(profile_signals(graph, datasets, stamp)),
        jobs=tuple(job_context(graph, urn, stamp) for urn in of_type(*JOB_ENTITY_TYPES)),
        features=tuple(feature_context(graph, urn, stamp) for urn in of_type("mlFeature")),
        feature_tables=tuple(feature_table_context(graph, urn, stamp) for urn in of_type("mlFeatureTable")),
        model_groups=tuple(model_group_context(graph, urn, stamp) for urn in of_type("mlModelGroup")),
        deployments=tuple(deployment_context(graph, urn, stamp) for urn in deployments.deployment_urns),
        incidents=tuple(incidents),
        edges=tuple(_edges_within(graph, scope | signal_urns, stamp)),
        field_lineage=tuple(_field_lineage_within(graph, scope, stamp)),
        upstream_paths=tuple(upstream),
        downstream_paths=(*downstream, *deployments.paths),
        warnings=tuple(warnings),
    )


def _scope(
    graph: MetadataGraph,
    model_urn: str,
    model: ModelContext | None,
    paths: Sequence[LineagePath],
    deployments: DeploymentLinks,
) -> set[str]:
    scope = {model_urn, *deployments.deployment_urns}
    scope.update(urn for path in paths for urn in path.urns)
    if model is not None:
        scope.update(model.feature_urns, model.group_urns, model.training_jobs, model.downstream_jobs)
    features = [urn for urn in scope if graph.entity_type(urn) == "mlFeature"]
    scope.update(feature_tables_containing(graph, features))
    return scope


def _edges_within(graph: MetadataGraph, urns: set[str], stamp: ProvenanceStamp) -> list[LineageEdge]:
    return [
        LineageEdge(
            source=edge.source,
            target=edge.destination,
            relationship=edge.relationship,
            is_lineage=edge.is_lineage,
            target_is_upstream=edge.destination_is_upstream,
            aspect=edge.aspect_name,
            field_path=edge.field_path,
            via=edge.via,
            provenance=stamp.of_aspect(graph, edge.source, edge.aspect_name),
        )
        for edge in graph.edges
        if subject_of(edge.source) in urns and subject_of(edge.destination) in urns
    ]


def _field_lineage_within(graph: MetadataGraph, urns: set[str], stamp: ProvenanceStamp) -> list[FieldLineageEdge]:
    return [
        FieldLineageEdge(
            upstream=edge.upstream,
            downstream=edge.downstream,
            declared_by=edge.declared_by,
            transform_operation=edge.transform_operation,
            confidence_score=edge.confidence_score,
            query=edge.query,
            provenance=stamp.of_aspect(graph, edge.declared_by, edge.aspect_name),
        )
        for edge in graph.field_edges
        if edge.declared_by in urns
    ]


def _walk_warnings(paths: Sequence[LineagePath], direction: str, limits: WalkLimits) -> list[str]:
    warnings = []
    cut = sum(1 for path in paths if path.stop_reason == "max_hops")
    if cut:
        warnings.append(f"{cut} {direction} lineage path(s) were cut at max_hops={limits.max_hops}")
    if len(paths) >= limits.max_paths:
        warnings.append(f"the {direction} walk stopped at max_paths={limits.max_paths}: more paths exist")
    for path in paths:
        if path.stop_reason == "cycle":
            end = path.urns[0] if direction == "upstream" else path.urns[-1]
            warnings.append(f"{direction} lineage has a cycle at {end}")
    return warnings


def _gap_warnings(
    graph: MetadataGraph,
    model_urn: str,
    model: ModelContext | None,
    upstream: Sequence[LineagePath],
    scope: set[str],
    deployments: DeploymentLinks,
) -> list[str]:
    warnings = []
    if not graph.has_metadata(model_urn):
        warnings.append(f"model {model_urn} has no metadata in the source")
    elif model is None:
        warnings.append(
            f"model {model_urn} has no mlModelProperties: its features, training jobs, groups and "
            "deployments are unknown"
        )
    if not upstream:
        warnings.append(f"no upstream lineage found for model {model_urn}")
    if graph.has_metadata(model_urn) and graph.aspect(model_urn, "ownership") is None:
        warnings.append(f"model {model_urn} has no ownership aspect")
    for urn in sorted(scope - {model_urn, *deployments.deployment_urns}):
        entity_type = graph.entity_type(urn)
        if not graph.has_metadata(urn):
            warnings.append(f"{entity_type} {urn} is referenced but has no metadata in the source")
            continue
        if graph.is_removed(urn):
            warnings.append(f"{entity_type} {urn} is soft-deleted (status.removed) but is in the model's context")
        if entity_type == "dataset" and graph.aspect(urn, "schemaMetadata") is None:
            warnings.append(f"dataset {urn} has no schemaMetadata: its fields are unknown")
        if entity_type == "mlFeature" and not graph.out_edges(urn, "DerivedFrom"):
            warnings.append(f"feature {urn} names no source dataset (mlFeatureProperties.sources)")
    return warnings
