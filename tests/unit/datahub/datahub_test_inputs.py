"""Test inputs for the DataHub adapter tests: the shared golden files and a churn-shaped MCP file.

The golden files (real DataHub connector output) are read in place from ``<repo>/../shared/datahub-golden``
and never copied into the repository; tests that need them are skipped when the folder is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from datahub.emitter.mce_builder import (
    make_data_flow_urn,
    make_data_job_urn,
    make_dataset_urn,
    make_ml_feature_table_urn,
    make_ml_feature_urn,
    make_ml_model_deployment_urn,
    make_ml_model_group_urn,
    make_ml_model_urn,
    make_schema_field_urn,
    make_user_urn,
)
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.ingestion.sink.file import write_metadata_file
from datahub.metadata.schema_classes import (
    AssertionInfoClass,
    AssertionResultClass,
    AssertionResultTypeClass,
    AssertionRunEventClass,
    AssertionRunStatusClass,
    AssertionStdOperatorClass,
    AssertionTypeClass,
    AuditStampClass,
    BooleanTypeClass,
    DataJobInfoClass,
    DataJobInputOutputClass,
    DatasetAssertionInfoClass,
    DatasetAssertionScopeClass,
    DatasetFieldProfileClass,
    DatasetProfileClass,
    DatasetPropertiesClass,
    DeploymentStatusClass,
    FineGrainedLineageClass,
    FineGrainedLineageDownstreamTypeClass,
    FineGrainedLineageUpstreamTypeClass,
    IncidentInfoClass,
    IncidentStateClass,
    IncidentStatusClass,
    IncidentTypeClass,
    MLFeatureDataTypeClass,
    MLFeaturePropertiesClass,
    MLFeatureTablePropertiesClass,
    MLHyperParamClass,
    MLMetricClass,
    MLModelDeploymentPropertiesClass,
    MLModelGroupPropertiesClass,
    MLModelPropertiesClass,
    NumberTypeClass,
    OtherSchemaClass,
    OwnerClass,
    OwnershipClass,
    OwnershipTypeClass,
    SchemaFieldClass,
    SchemaFieldDataTypeClass,
    SchemaMetadataClass,
    StringTypeClass,
)

GOLDEN_DIR = Path(__file__).resolve().parents[3].parent / "shared" / "datahub-golden"
SCENARIO_METADATA = (
    Path(__file__).resolve().parents[3] / "fixtures" / "scenarios" / "churn-monthly-spend" / "datahub" / "metadata.json"
)
GOLDEN_FILES = (
    "airflow_v2_athena_operator.json",
    "feast_repository_mces_golden.json",
    "ge_mcps_golden.json",
    "iceberg_profile_mcps_golden.json",
    "mlflow_mcps_golden.json",
    "sagemaker_mces_golden.json",
    "sql-queries_lazy-schema-loading.json",
    "vertexai_mcps_golden.json",
)


def golden(name: str) -> Path:
    path = GOLDEN_DIR / name
    if not path.is_file():
        pytest.skip(f"DataHub golden file {name} not found in {GOLDEN_DIR} (shared folder absent)")
    return path


class Churn:
    """Urns of the churn-shaped graph written by :func:`write_churn_metadata`."""

    RAW = make_dataset_urn("postgres", "billing.public.customers", "PROD")
    FEATURE_DATASET = make_dataset_urn("snowflake", "analytics.ml.customer_features", "PROD")
    TRAINING_DATASET = make_dataset_urn("snowflake", "analytics.ml.churn_training_set", "PROD")
    FEATURE_JOB = make_data_job_urn("airflow", "churn_features", "build_features", cluster="prod")
    TRAINING_JOB = make_data_job_urn("airflow", "churn_training", "train_model", cluster="prod")
    FEATURE_FLOW = make_data_flow_urn("airflow", "churn_features", "prod")
    MONTHLY_SPEND = make_ml_feature_urn("customer_features", "monthly_spend")
    TENURE = make_ml_feature_urn("customer_features", "tenure_months")
    FEATURE_TABLE = make_ml_feature_table_urn("feast", "customer_features")
    MODEL = make_ml_model_urn("mlflow", "churn_model", "PROD")
    GROUP = make_ml_model_group_urn("mlflow", "churn", "PROD")
    DEPLOYMENT = make_ml_model_deployment_urn("sagemaker", "churn-endpoint", "PROD")
    ASSERTION = "urn:li:assertion:monthly-spend-not-null"
    INCIDENT = "urn:li:incident:feature-dataset-late"
    DATA_ENGINEER = make_user_urn("dana")
    ML_ENGINEER = make_user_urn("priya")


def _schema(dataset_urn: str, fields: list[tuple[str, object, str, bool]]) -> SchemaMetadataClass:
    stamp = AuditStampClass(time=0, actor="urn:li:corpuser:ingestion")
    return SchemaMetadataClass(
        schemaName=dataset_urn,
        platform="urn:li:dataPlatform:snowflake",
        version=0,
        hash="",
        created=stamp,
        lastModified=stamp,
        platformSchema=OtherSchemaClass(rawSchema=""),
        fields=[
            SchemaFieldClass(
                fieldPath=path,
                type=SchemaFieldDataTypeClass(type=data_type),
                nativeDataType=native,
                nullable=nullable,
            )
            for path, data_type, native, nullable in fields
        ],
    )


def _owners(*owners: str) -> OwnershipClass:
    return OwnershipClass(owners=[OwnerClass(owner=o, type=OwnershipTypeClass.TECHNICAL_OWNER) for o in owners])


def churn_proposals() -> list[MetadataChangeProposalWrapper]:
    """raw -> feature job -> feature dataset -> training job -> training dataset -> features -> model."""
    c = Churn
    customer_fields = [
        ("customer_id", StringTypeClass(), "VARCHAR", False),
        ("monthly_spend", NumberTypeClass(), "NUMBER(10,2)", True),
        ("tenure_months", NumberTypeClass(), "INTEGER", False),
        ("churned", BooleanTypeClass(), "BOOLEAN", False),
    ]
    aspects: list[tuple[str, object]] = [
        (c.RAW, DatasetPropertiesClass(name="customers", description="raw billing customers")),
        (c.RAW, _schema(c.RAW, customer_fields)),
        (c.RAW, _owners(c.DATA_ENGINEER)),
        (c.FEATURE_DATASET, DatasetPropertiesClass(name="customer_features")),
        (c.FEATURE_DATASET, _schema(c.FEATURE_DATASET, customer_fields[:3])),
        (c.TRAINING_DATASET, DatasetPropertiesClass(name="churn_training_set")),
        (c.TRAINING_DATASET, _schema(c.TRAINING_DATASET, customer_fields)),
        (c.FEATURE_JOB, DataJobInfoClass(name="build_features", type="COMMAND", flowUrn=c.FEATURE_FLOW)),
        (
            c.FEATURE_JOB,
            DataJobInputOutputClass(
                inputDatasets=[c.RAW],
                outputDatasets=[c.FEATURE_DATASET],
                fineGrainedLineages=[
                    FineGrainedLineageClass(
                        upstreamType=FineGrainedLineageUpstreamTypeClass.FIELD_SET,
                        upstreams=[make_schema_field_urn(c.RAW, "monthly_spend")],
                        downstreamType=FineGrainedLineageDownstreamTypeClass.FIELD,
                        downstreams=[make_schema_field_urn(c.FEATURE_DATASET, "monthly_spend")],
                        transformOperation="COALESCE(monthly_spend, 0)",
                        confidenceScore=1.0,
                    )
                ],
            ),
        ),
        (c.FEATURE_JOB, _owners(c.DATA_ENGINEER)),
        (c.TRAINING_JOB, DataJobInfoClass(name="train_model", type="COMMAND")),
        (
            c.TRAINING_JOB,
            DataJobInputOutputClass(inputDatasets=[c.FEATURE_DATASET], outputDatasets=[c.TRAINING_DATASET]),
        ),
        (
            c.MONTHLY_SPEND,
            MLFeaturePropertiesClass(dataType=MLFeatureDataTypeClass.CONTINUOUS, sources=[c.TRAINING_DATASET]),
        ),
        (c.TENURE, MLFeaturePropertiesClass(dataType=MLFeatureDataTypeClass.COUNT, sources=[c.TRAINING_DATASET])),
        (c.FEATURE_TABLE, MLFeatureTablePropertiesClass(mlFeatures=[c.MONTHLY_SPEND, c.TENURE])),
        (c.GROUP, MLModelGroupPropertiesClass(name="churn", description="churn models")),
        (
            c.MODEL,
            MLModelPropertiesClass(
                name="churn_model",
                trainingJobs=[c.TRAINING_JOB],
                mlFeatures=[c.MONTHLY_SPEND, c.TENURE],
                groups=[c.GROUP],
                deployments=[c.DEPLOYMENT],
                hyperParams=[MLHyperParamClass(name="max_depth", value="6")],
                trainingMetrics=[MLMetricClass(name="f1", value="0.81")],
            ),
        ),
        (c.MODEL, _owners(c.ML_ENGINEER)),
        (c.DEPLOYMENT, MLModelDeploymentPropertiesClass(status=DeploymentStatusClass.IN_SERVICE)),
        (
            c.ASSERTION,
            AssertionInfoClass(
                type=AssertionTypeClass.DATASET,
                description="monthly_spend is never null",
                datasetAssertion=DatasetAssertionInfoClass(
                    dataset=c.RAW,
                    scope=DatasetAssertionScopeClass.DATASET_COLUMN,
                    fields=[make_schema_field_urn(c.RAW, "monthly_spend")],
                    operator=AssertionStdOperatorClass.NOT_NULL,
                    nativeType="expect_column_values_to_not_be_null",
                ),
            ),
        ),
        (c.ASSERTION, _assertion_run(1_700_000_000_000, AssertionResultTypeClass.SUCCESS)),
        (c.ASSERTION, _assertion_run(1_700_086_400_000, AssertionResultTypeClass.FAILURE)),
        (
            c.RAW,
            DatasetProfileClass(
                timestampMillis=1_700_086_400_000,
                rowCount=1000,
                columnCount=4,
                fieldProfiles=[
                    DatasetFieldProfileClass(fieldPath="monthly_spend", nullCount=37, nullProportion=0.037),
                    DatasetFieldProfileClass(fieldPath="customer_id", nullCount=0, nullProportion=0.0),
                ],
            ),
        ),
        (
            c.INCIDENT,
            IncidentInfoClass(
                type=IncidentTypeClass.FRESHNESS,
                title="customer_features is late",
                entities=[c.FEATURE_DATASET],
                status=IncidentStatusClass(
                    state=IncidentStateClass.ACTIVE, lastUpdated=AuditStampClass(time=0, actor=c.DATA_ENGINEER)
                ),
                created=AuditStampClass(time=1_700_000_000_000, actor=c.DATA_ENGINEER),
            ),
        ),
    ]
    return [MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect) for urn, aspect in aspects]


def _assertion_run(timestamp_millis: int, result: str) -> AssertionRunEventClass:
    return AssertionRunEventClass(
        timestampMillis=timestamp_millis,
        runId=str(timestamp_millis),
        asserteeUrn=Churn.RAW,
        assertionUrn=Churn.ASSERTION,
        status=AssertionRunStatusClass.COMPLETE,
        result=AssertionResultClass(type=result),
    )


def write_churn_metadata(folder: Path) -> Path:
    path = folder / "churn-metadata.json"
    write_metadata_file(path, churn_proposals())
    return path
