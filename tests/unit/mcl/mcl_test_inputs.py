"""Test inputs for the MCL tests: the churn scenario's DataHub graph, golden files, MCL builders.

The golden files (real DataHub connector output) are read in place from ``<repo>/../shared/datahub-golden``
and never copied; tests that need them are skipped when the folder is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from datahub.emitter.serialization_helper import pre_json_transform
from datahub.metadata.schema_classes import SchemaMetadataClass, _Aspect

from libs.datahub.mcl.avro_schema import shipped_mcl_schema
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.events import DecodedMcl
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.record_builder import mcl_record as build_mcl_record
from libs.datahub.mcl.schema_registry import ShippedSchemaResolver
from libs.datahub.mcl.wire import encode_confluent
from libs.datahub.mcp_file import AspectRecord, load_mcp_file

REPO = Path(__file__).resolve().parents[3]
GOLDEN_DIR = REPO.parent / "shared" / "datahub-golden"
SCENARIO_METADATA = REPO / "fixtures" / "scenarios" / "churn-monthly-spend" / "datahub" / "metadata.json"
SCHEMA_ID = 18
CREATED_MILLIS = 1_741_600_000_000


class Churn:
    """Urns of the churn scenario's DataHub graph (fixtures/scenarios/churn-monthly-spend/datahub)."""

    RAW = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.crm.customers,PROD)"
    FEATURES = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.ml.churn_features,PROD)"
    TRAINING_SET = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.ml.churn_training_set,PROD)"
    FEATURE_JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,churn_features,prod),build_churn_features)"
    TRAINING_JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,churn_training,prod),train_churn_model)"
    ACCOUNT_AGE = "urn:li:mlFeature:(churn_customer_features,account_age_months)"
    MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)"
    DEPLOYMENT = "urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,churn-endpoint,PROD)"
    MODEL_OWNERS = ("urn:li:corpuser:priya.raman", "urn:li:corpGroup:ml-platform")
    ASSERTION = "urn:li:assertion:customers-account-age-months-non-negative"
    UNRELATED = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.finance.invoices,PROD)"


def golden(name: str) -> Path:
    path = GOLDEN_DIR / name
    if not path.is_file():
        pytest.skip(f"DataHub golden file {name} not found in {GOLDEN_DIR} (shared folder absent)")
    return path


def churn_records() -> tuple[AspectRecord, ...]:
    return load_mcp_file(SCENARIO_METADATA).records


def churn_mirror() -> MetadataMirror:
    mirror = MetadataMirror.in_memory()
    mirror.bootstrap(churn_records(), source=str(SCENARIO_METADATA))
    return mirror


def aspect_json(aspect: _Aspect) -> dict[str, Any]:
    """An SDK aspect in DataHub's JSON form (``com.linkedin.*`` union names), as MCLs carry it."""
    return pre_json_transform(aspect.to_obj())


def mcl_record(
    urn: str,
    aspect_name: str,
    aspect: _Aspect | dict[str, Any] | None,
    previous: _Aspect | dict[str, Any] | None = None,
    *,
    change_type: str = "UPSERT",
    run_id: str = "test-run",
) -> dict[str, Any]:
    """An MCL record as fastavro reads/writes it with the shipped schema (aspect values as bytes)."""
    return build_mcl_record(
        urn, aspect_name, aspect, previous, change_type=change_type, run_id=run_id, created_millis=CREATED_MILLIS
    )


def avro_message(record: dict[str, Any], schema_id: int = SCHEMA_ID) -> bytes:
    return encode_confluent(schema_id, record, shipped_mcl_schema())


def json_message(record: dict[str, Any]) -> str:
    """The same MCL JSON-encoded: GenericAspect values as JSON strings."""

    def as_text(generic: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if generic is None else {**generic, "value": generic["value"].decode()}

    return json.dumps(
        {**record, "aspect": as_text(record["aspect"]), "previousAspectValue": as_text(record["previousAspectValue"])}
    )


def decoded(record: dict[str, Any]) -> DecodedMcl:
    mcl = MclDecoder(ShippedSchemaResolver()).decode_avro(avro_message(record))
    assert mcl is not None, "the prefilter dropped a record a test expected to be mirrored"
    return mcl


def churn_raw_schema(mirror: MetadataMirror) -> SchemaMetadataClass:
    schema = mirror.aspect(Churn.RAW, "schemaMetadata")
    assert isinstance(schema, SchemaMetadataClass)
    return schema


def without_column(schema: SchemaMetadataClass, field_path: str) -> SchemaMetadataClass:
    changed = SchemaMetadataClass.from_obj(schema.to_obj())
    changed.fields = [field for field in changed.fields if field.fieldPath != field_path]
    return changed
