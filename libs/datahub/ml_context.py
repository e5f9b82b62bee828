"""ML-side context: the model, its features, feature tables, groups, deployments, and data jobs."""

from __future__ import annotations

from collections.abc import Iterable

from datahub.metadata.schema_classes import (
    DataJobInfoClass,
    DataProcessInstanceRelationshipsClass,
    MLFeaturePropertiesClass,
    MLFeatureTablePropertiesClass,
    MLModelDeploymentPropertiesClass,
    MLModelGroupPropertiesClass,
    MLModelPropertiesClass,
)
from datahub.metadata.urns import Urn

from contracts.context_snapshot import (
    DataJobContext,
    DeploymentContext,
    FeatureContext,
    FeatureTableContext,
    ModelContext,
    ModelGroupContext,
)
from libs.datahub.entity_description import describe_entity
from libs.datahub.graph import MetadataGraph
from libs.datahub.provenance import ProvenanceStamp

CONTAINS = "Contains"
JOB_ENTITY_TYPES = frozenset({"dataJob", "dataProcessInstance"})
DEFAULT_DEPLOYMENT_LINK = "mlModelProperties.deployments"


def model_context(graph: MetadataGraph, model_urn: str, stamp: ProvenanceStamp) -> ModelContext | None:
    properties = graph.aspect_value(model_urn, "mlModelProperties")
    if not isinstance(properties, MLModelPropertiesClass):
        return None
    deployments = tuple(properties.deployments or ())
    return ModelContext(
        urn=model_urn,
        name=properties.name or describe_entity(graph, model_urn, stamp).name,
        description=properties.description,
        version=properties.version.versionTag if properties.version else None,
        group_urns=tuple(properties.groups or ()),
        training_jobs=tuple(properties.trainingJobs or ()),
        downstream_jobs=tuple(properties.downstreamJobs or ()),
        feature_urns=tuple(properties.mlFeatures or ()),
        deployment_urns=deployments,
        deployment_statuses={urn: _deployment_status(graph, urn) for urn in deployments},
        hyper_params=_hyper_params(properties),
        training_metrics={m.name: str(m.value) for m in properties.trainingMetrics or () if m.value is not None},
        provenance=stamp.of_aspect(graph, model_urn, "mlModelProperties"),
    )


def feature_context(graph: MetadataGraph, urn: str, stamp: ProvenanceStamp) -> FeatureContext:
    properties = graph.aspect_value(urn, "mlFeatureProperties")
    properties = properties if isinstance(properties, MLFeaturePropertiesClass) else None
    return FeatureContext(
        urn=urn,
        name=describe_entity(graph, urn, stamp).name,
        data_type=str(properties.dataType) if properties and properties.dataType else None,
        description=properties.description if properties else None,
        sources=tuple(properties.sources or ()) if properties else (),
        feature_tables=tuple(edge.source for edge in graph.in_edges(urn, CONTAINS)),
        provenance=stamp.of_first_present(graph, urn, ("mlFeatureProperties",)),
    )


def feature_tables_containing(graph: MetadataGraph, feature_urns: Iterable[str]) -> set[str]:
    return {edge.source for urn in feature_urns for edge in graph.in_edges(urn, CONTAINS)}


def feature_table_context(graph: MetadataGraph, urn: str, stamp: ProvenanceStamp) -> FeatureTableContext:
    properties = graph.aspect_value(urn, "mlFeatureTableProperties")
    properties = properties if isinstance(properties, MLFeatureTablePropertiesClass) else None
    return FeatureTableContext(
        urn=urn,
        name=describe_entity(graph, urn, stamp).name,
        description=properties.description if properties else None,
        features=tuple(properties.mlFeatures or ()) if properties else (),
        primary_keys=tuple(properties.mlPrimaryKeys or ()) if properties else (),
        provenance=stamp.of_first_present(graph, urn, ("mlFeatureTableProperties",)),
    )


def model_group_context(graph: MetadataGraph, urn: str, stamp: ProvenanceStamp) -> ModelGroupContext:
    properties = graph.aspect_value(urn, "mlModelGroupProperties")
    properties = properties if isinstance(properties, MLModelGroupPropertiesClass) else None
    return ModelGroupContext(
        urn=urn,
        name=(properties.name if properties else None) or describe_entity(graph, urn, stamp).name,
        description=properties.description if properties else None,
        training_jobs=tuple(properties.trainingJobs or ()) if properties else (),
        provenance=stamp.of_first_present(graph, urn, ("mlModelGroupProperties",)),
    )


def deployment_context(graph: MetadataGraph, urn: str, stamp: ProvenanceStamp) -> DeploymentContext:
    entity = describe_entity(graph, urn, stamp)
    links = [edge for edge in graph.in_edges(urn) if graph.entity_type(edge.source) == "mlModel"]
    return DeploymentContext(
        urn=urn,
        name=entity.name,
        platform=entity.platform,
        status=_deployment_status(graph, urn),
        model_urns=tuple(edge.source for edge in links),
        linked_via=links[0].declared_in if links else DEFAULT_DEPLOYMENT_LINK,
        provenance=stamp.of_first_present(graph, urn, ("mlModelDeploymentProperties",)),
    )


def job_context(graph: MetadataGraph, urn: str, stamp: ProvenanceStamp) -> DataJobContext:
    """What a data job or process instance reads and writes, in lineage terms (annotation directions)."""
    upstream = [hop.urn for hop in graph.upstream_of(urn)]
    downstream = [hop.urn for hop in graph.downstream_of(urn)]
    return DataJobContext(
        urn=urn,
        entity_type=graph.entity_type(urn),
        name=describe_entity(graph, urn, stamp).name,
        flow_urn=_flow_of(graph, urn),
        input_datasets=tuple(u for u in upstream if graph.entity_type(u) == "dataset"),
        output_datasets=tuple(u for u in downstream if graph.entity_type(u) == "dataset"),
        input_jobs=tuple(u for u in upstream if graph.entity_type(u) in JOB_ENTITY_TYPES),
        provenance=stamp.of_first_present(
            graph, urn, ("dataJobInputOutput", "dataProcessInstanceInput", "dataJobInfo")
        ),
    )


def _deployment_status(graph: MetadataGraph, deployment_urn: str) -> str | None:
    properties = graph.aspect_value(deployment_urn, "mlModelDeploymentProperties")
    if isinstance(properties, MLModelDeploymentPropertiesClass) and properties.status:
        return str(properties.status)
    return None


def _hyper_params(properties: MLModelPropertiesClass) -> dict[str, str]:
    params = {name: str(value) for name, value in (properties.hyperParameters or {}).items()}
    params.update({p.name: str(p.value) for p in properties.hyperParams or () if p.value is not None})
    return params


def _flow_of(graph: MetadataGraph, urn: str) -> str | None:
    info = graph.aspect_value(urn, "dataJobInfo")
    if isinstance(info, DataJobInfoClass) and info.flowUrn:
        return info.flowUrn
    relationships = graph.aspect_value(urn, "dataProcessInstanceRelationships")
    if isinstance(relationships, DataProcessInstanceRelationshipsClass) and relationships.parentTemplate:
        template = relationships.parentTemplate
        if graph.entity_type(template) == "dataFlow":
            return template
        return _flow_of(graph, template) if graph.entity_type(template) == "dataJob" else None
    try:
        flow = getattr(Urn.from_string(urn), "flow", None)
    except Exception:  # the SDK's urn parser raises several types on unusual urns
        return None
    return flow if isinstance(flow, str) else None
