"""Describe one entity from its aspects: name and platform, schema fields, owners."""

from __future__ import annotations

from typing import Any

from datahub.emitter.mce_builder import make_data_platform_urn, make_schema_field_urn
from datahub.metadata.schema_classes import (
    DataPlatformInstanceClass,
    OwnershipClass,
    SchemaFieldClass,
    SchemaMetadataClass,
)
from datahub.metadata.urns import Urn
from datahub.utilities.urns.field_paths import get_simple_field_path_from_v2_field_path

from contracts.context_snapshot import ContextEntity, Owner, Provenance, SchemaField
from libs.datahub.graph import MetadataGraph
from libs.datahub.provenance import ProvenanceStamp

# The aspect that names and describes each entity type (presentation only; not relationships).
PROPERTIES_ASPECTS: dict[str, str] = {
    "dataset": "datasetProperties",
    "dataJob": "dataJobInfo",
    "dataFlow": "dataFlowInfo",
    "dataProcessInstance": "dataProcessInstanceProperties",
    "mlModel": "mlModelProperties",
    "mlModelGroup": "mlModelGroupProperties",
    "mlModelDeployment": "mlModelDeploymentProperties",
    "mlFeature": "mlFeatureProperties",
    "mlFeatureTable": "mlFeatureTableProperties",
    "mlPrimaryKey": "mlPrimaryKeyProperties",
    "container": "containerProperties",
}


def describe_entity(graph: MetadataGraph, urn: str, stamp: ProvenanceStamp) -> ContextEntity:
    entity_type = graph.entity_type(urn)
    properties_aspect = PROPERTIES_ASPECTS.get(entity_type)
    properties = graph.aspect_value(urn, properties_aspect) if properties_aspect else None
    typed_urn = _parse_urn(urn)
    custom = properties.get("customProperties") if properties is not None else None
    declared_name = _text(properties.get("name")) if properties is not None else None
    return ContextEntity(
        urn=urn,
        entity_type=entity_type,
        name=declared_name or _urn_name(typed_urn),
        platform=_platform(graph, urn, typed_urn),
        description=_text(properties.get("description")) if properties is not None else None,
        properties={str(key): str(value) for key, value in (custom or {}).items()},
        removed=graph.is_removed(urn),
        known_aspects=graph.aspect_names(urn),
        provenance=stamp.of_first_present(graph, urn, (properties_aspect,) if properties_aspect else ()),
    )


def schema_fields_of(graph: MetadataGraph, dataset_urn: str, stamp: ProvenanceStamp) -> list[SchemaField]:
    schema = graph.aspect_value(dataset_urn, "schemaMetadata")
    if not isinstance(schema, SchemaMetadataClass):
        return []
    provenance = stamp.of_aspect(graph, dataset_urn, "schemaMetadata")
    return [_schema_field(dataset_urn, field, provenance) for field in schema.fields]


def owners_of(graph: MetadataGraph, urn: str, stamp: ProvenanceStamp) -> list[Owner]:
    ownership = graph.aspect_value(urn, "ownership")
    if not isinstance(ownership, OwnershipClass):
        return []
    provenance = stamp.of_aspect(graph, urn, "ownership")
    return [
        Owner(
            entity_urn=urn,
            owner_urn=owner.owner,
            type=str(owner.type),
            type_urn=owner.typeUrn,
            provenance=provenance,
        )
        for owner in ownership.owners
    ]


def normalised_type_name(field: SchemaFieldClass) -> str:
    """``NumberTypeClass`` -> ``"number"``: the DataHub type class of a schema field, lower case."""
    type_name: str = type(field.type.type).RECORD_SCHEMA.name
    return type_name.removesuffix("Type").lower()


def _schema_field(dataset_urn: str, field: SchemaFieldClass, provenance: Provenance) -> SchemaField:
    return SchemaField(
        dataset_urn=dataset_urn,
        field_path=field.fieldPath,
        field_urn=make_schema_field_urn(dataset_urn, field.fieldPath),
        simple_path=get_simple_field_path_from_v2_field_path(field.fieldPath),
        native_type=field.nativeDataType,
        normalised_type=normalised_type_name(field),
        nullable=bool(field.nullable),
        is_part_of_key=bool(field.isPartOfKey),
        description=field.description,
        provenance=provenance,
    )


def _platform(graph: MetadataGraph, urn: str, typed_urn: Urn | None) -> str | None:
    instance = graph.aspect_value(urn, "dataPlatformInstance")
    if isinstance(instance, DataPlatformInstanceClass) and instance.platform:
        return instance.platform
    platform = getattr(typed_urn, "platform", None)
    if isinstance(platform, str) and platform.startswith("urn:li:dataPlatform:"):
        return platform
    orchestrator = getattr(typed_urn, "orchestrator", None)
    return make_data_platform_urn(orchestrator) if isinstance(orchestrator, str) and orchestrator else None


def _urn_name(typed_urn: Urn | None) -> str | None:
    for attribute in ("name", "job_id", "id", "assertion_id"):
        value = getattr(typed_urn, attribute, None)
        if isinstance(value, str) and value:
            return value
    return None


def _parse_urn(urn: str) -> Urn | None:
    try:
        return Urn.from_string(urn)
    except Exception:  # the SDK's urn parser raises several types on unusual urns
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
