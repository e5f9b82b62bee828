"""Rebuilding aspects from MCP tool answers (no server needed)."""

from __future__ import annotations

from datahub.metadata.schema_classes import NullTypeClass, NumberTypeClass, SchemaMetadataClass

from libs.datahub.mcp_aspects import AspectRebuilder
from libs.datahub.mcp_findings import McpFindings
from tests.unit.providers.provider_test_support import MODEL, RAW

FEATURE = "urn:li:mlFeature:(churn_customer_features,monthly_spend)"
JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,churn_training,prod),train_churn_model)"
GROUP = "urn:li:mlModelGroup:(urn:li:dataPlatform:mlflow,churn-model,PROD)"


def _schema_without_types(*native_types: str) -> dict:
    # What get_aspect_history answers after its cleaning: the empty `type` union member is gone.
    return {
        "schemaName": "analytics.crm.customers",
        "platform": "urn:li:dataPlatform:snowflake",
        "version": 0,
        "hash": "",
        "platformSchema": {"com.linkedin.schema.MySqlDDL": {"tableSchema": ""}},
        "fields": [
            {"fieldPath": f"c{i}", "nativeDataType": native, "nullable": False} for i, native in enumerate(native_types)
        ],
    }


def test_schema_field_types_are_inferred_from_the_native_type() -> None:
    findings = McpFindings(MODEL, aspect_values={(RAW, "schemaMetadata"): _schema_without_types("NUMBER(38,0)")})

    records, warnings = AspectRebuilder(findings, "mcp test").rebuild()

    schema = records[0].aspect
    assert isinstance(schema, SchemaMetadataClass)
    assert isinstance(schema.fields[0].type.type, NumberTypeClass)
    assert warnings == []


def test_an_unresolvable_native_type_becomes_null_type_with_a_warning() -> None:
    findings = McpFindings(MODEL, aspect_values={(RAW, "schemaMetadata"): _schema_without_types("GEOGRAPHY_X")})

    records, warnings = AspectRebuilder(findings, "mcp test").rebuild()

    assert isinstance(records[0].aspect.fields[0].type.type, NullTypeClass)
    assert len(warnings) == 1 and "GEOGRAPHY_X" in warnings[0]


def test_model_lineage_fields_come_from_lineage_neighbours_by_entity_type() -> None:
    findings = McpFindings(
        MODEL,
        entities={
            MODEL: {
                "urn": MODEL,
                "description": "churn",
                "properties": {"customProperties": [{"key": "k", "value": "v"}]},
            }
        },
        upstream={MODEL: [FEATURE, JOB]},
        downstream={MODEL: [GROUP]},
    )

    records, _ = AspectRebuilder(findings, "mcp test").rebuild()

    properties = next(r.aspect for r in records if r.aspect_name == "mlModelProperties")
    assert (properties.mlFeatures, properties.trainingJobs, properties.groups) == ([FEATURE], [JOB], [GROUP])
    assert properties.customProperties == {"k": "v"} and properties.deployments is None
    assert records[0].location == "mcp test get_entities+get_lineage"


def test_ownership_falls_back_to_get_entities_when_history_is_missing() -> None:
    owner = {"owner": {"urn": "urn:li:corpuser:priya"}, "type": "TECHNICAL_OWNER"}
    findings = McpFindings(MODEL, entities={MODEL: {"urn": MODEL, "ownership": {"owners": [owner]}}})

    records, _ = AspectRebuilder(findings, "mcp test").rebuild()

    ownership = next(r.aspect for r in records if r.aspect_name == "ownership")
    assert [(o.owner, o.type) for o in ownership.owners] == [("urn:li:corpuser:priya", "TECHNICAL_OWNER")]
