"""Generated workloads for the MCL benchmarks: an MCL stream where most events are irrelevant, and a
large layered lineage graph. Deterministic for a given seed.

The MCL stream is built from aspect JSON templates written by the SDK's own classes (so the JSON is what
DataHub writes), varied per event by urn, and framed as Confluent Avro with the shipped MCL schema.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass

from datahub.emitter.serialization_helper import pre_json_transform
from datahub.metadata.schema_classes import (
    AuditStampClass,
    BrowsePathEntryClass,
    BrowsePathsV2Class,
    DatasetLineageTypeClass,
    DatasetPropertiesClass,
    DatasetUsageStatisticsClass,
    MLFeaturePropertiesClass,
    MLModelPropertiesClass,
    NumberTypeClass,
    OperationClass,
    OperationTypeClass,
    OtherSchemaClass,
    OwnerClass,
    OwnershipClass,
    OwnershipTypeClass,
    SchemaFieldClass,
    SchemaFieldDataTypeClass,
    SchemaMetadataClass,
    StatusClass,
    StringTypeClass,
    SubTypesClass,
    UpstreamClass,
    UpstreamLineageClass,
    _Aspect,
)

from libs.datahub.mcl.avro_schema import shipped_mcl_schema
from libs.datahub.mcl.wire import encode_confluent

BENCH_SCHEMA_ID = 18
URN_PLACEHOLDER = "@URN@"
UPSTREAM_PLACEHOLDER = "@UP{}@"
_STAMP = AuditStampClass(time=1_735_689_600_000, actor="urn:li:corpuser:ingestion")


def dataset_urn(index: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:snowflake,warehouse.sales.table_{index},PROD)"


# --- the MCL stream ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MclStream:
    preamble: tuple[bytes, ...]
    """MCLs that put ML features and models downstream of the first ``model_fed`` datasets (applied untimed)."""
    messages: tuple[bytes, ...]
    relevant: int
    kinds: dict[str, int]


def irrelevant_templates() -> dict[str, _Aspect]:
    return {
        "datasetProperties": DatasetPropertiesClass(
            name="table", description="Daily sales facts.", customProperties={"owner_team": "sales", "tier": "2"}
        ),
        "browsePathsV2": BrowsePathsV2Class(
            path=[BrowsePathEntryClass(id="warehouse"), BrowsePathEntryClass(id="sales")]
        ),
        "subTypes": SubTypesClass(typeNames=["Table"]),
        "datasetUsageStatistics": DatasetUsageStatisticsClass(
            timestampMillis=1_735_689_600_000, uniqueUserCount=4, totalSqlQueries=120
        ),
        "operation": OperationClass(
            timestampMillis=1_735_689_600_000, operationType=OperationTypeClass.INSERT, lastUpdatedTimestamp=1
        ),
    }


def relevant_templates(upstreams: int = 3, columns: int = 12) -> dict[str, _Aspect]:
    fields = [
        SchemaFieldClass(
            fieldPath=f"column_{index}",
            type=SchemaFieldDataTypeClass(NumberTypeClass() if index % 2 else StringTypeClass()),
            nativeDataType="NUMBER(38,0)" if index % 2 else "VARCHAR(64)",
            nullable=index % 3 == 0,
            description=f"Column {index}.",
        )
        for index in range(columns)
    ]
    return {
        "schemaMetadata": SchemaMetadataClass(
            schemaName="table",
            platform="urn:li:dataPlatform:snowflake",
            version=0,
            hash="",
            platformSchema=OtherSchemaClass(rawSchema=""),
            fields=fields,
            lastModified=_STAMP,
        ),
        "ownership": OwnershipClass(
            owners=[
                OwnerClass(owner="urn:li:corpuser:analyst", type=OwnershipTypeClass.TECHNICAL_OWNER),
                OwnerClass(owner="urn:li:corpGroup:sales-data", type=OwnershipTypeClass.BUSINESS_OWNER),
            ],
            lastModified=_STAMP,
        ),
        "upstreamLineage": UpstreamLineageClass(
            upstreams=[
                UpstreamClass(
                    dataset=UPSTREAM_PLACEHOLDER.format(index),
                    type=DatasetLineageTypeClass.TRANSFORMED,
                    auditStamp=_STAMP,
                )
                for index in range(upstreams)
            ]
        ),
        "status": StatusClass(removed=False),
    }


def mcl_stream(
    count: int, relevant_share: float = 0.10, datasets: int = 10_000, model_fed: int = 100, seed: int = 7
) -> MclStream:
    """``count`` Confluent-framed MCLs on ``datasets`` datasets; ``relevant_share`` of them mirrored.

    Schema changes drop a column against their previousAspectValue (a breaking change); ML features and
    models sit downstream of the first ``model_fed`` datasets only, so about ``model_fed / datasets`` of
    the schema changes put a model at risk."""
    rng = random.Random(seed)
    schema = shipped_mcl_schema()
    irrelevant = {name: _json_text(aspect) for name, aspect in irrelevant_templates().items()}
    relevant = {name: _json_text(aspect) for name, aspect in relevant_templates().items()}
    previous_schema = _json_text(_schema_with_extra_column(relevant_templates()["schemaMetadata"]))
    messages: list[bytes] = []
    kinds: dict[str, int] = {}
    relevant_count = 0
    for _ in range(count):
        target = rng.randrange(datasets)
        urn = dataset_urn(target)
        if rng.random() < relevant_share:
            aspect_name = rng.choice(sorted(relevant))
            text = relevant[aspect_name].replace(URN_PLACEHOLDER, urn)
            for index in range(3):
                text = text.replace(UPSTREAM_PLACEHOLDER.format(index), dataset_urn(rng.randrange(datasets)))
            previous = previous_schema if aspect_name == "schemaMetadata" else None
            relevant_count += 1
        else:
            aspect_name = rng.choice(sorted(irrelevant))
            text, previous = irrelevant[aspect_name], None
        kinds[aspect_name] = kinds.get(aspect_name, 0) + 1
        messages.append(encode_confluent(BENCH_SCHEMA_ID, _mcl_record(urn, aspect_name, text, previous), schema))
    return MclStream(_model_preamble(model_fed, schema), tuple(messages), relevant_count, kinds)


def _model_preamble(model_fed: int, schema: dict[str, object]) -> tuple[bytes, ...]:
    """One feature per model-fed dataset, one model (with a deployment and owners) per 5 features."""
    messages = []
    features = [f"urn:li:mlFeature:(bench_features,feature_{index})" for index in range(model_fed)]
    for index, feature in enumerate(features):
        aspect = MLFeaturePropertiesClass(sources=[dataset_urn(index)])
        messages.append((feature, "mlFeatureProperties", aspect))
    for index in range(0, model_fed, 5):
        model = f"urn:li:mlModel:(urn:li:dataPlatform:mlflow,bench_model_{index // 5},PROD)"
        properties = MLModelPropertiesClass(mlFeatures=features[index : index + 5], deployments=[deployment_of(model)])
        owners = OwnershipClass(
            owners=[OwnerClass(owner="urn:li:corpuser:ml", type=OwnershipTypeClass.TECHNICAL_OWNER)]
        )
        messages += [(model, "mlModelProperties", properties), (model, "ownership", owners)]
    return tuple(
        encode_confluent(BENCH_SCHEMA_ID, _mcl_record(urn, name, _json_text(aspect), None, urn.split(":")[2]), schema)
        for urn, name, aspect in messages
    )


def _mcl_record(
    urn: str, aspect_name: str, text: str, previous: str | None, entity_type: str = "dataset"
) -> dict[str, object]:
    return {
        "entityType": entity_type,
        "entityUrn": urn,
        "changeType": "UPSERT",
        "aspectName": aspect_name,
        "aspect": {"value": text.encode(), "contentType": "application/json"},
        "previousAspectValue": None
        if previous is None
        else {"value": previous.encode(), "contentType": "application/json"},
        "systemMetadata": {"lastObserved": 1_735_689_600_000, "runId": "ingestion-run-1", "properties": None},
        "created": {"time": 1_735_689_600_000, "actor": "urn:li:corpuser:ingestion"},
    }


def _json_text(aspect: _Aspect) -> str:
    return json.dumps(pre_json_transform(aspect.to_obj()), separators=(",", ":"))


def _schema_with_extra_column(schema: _Aspect) -> _Aspect:
    copy = SchemaMetadataClass.from_obj(schema.to_obj())
    extra = SchemaFieldClass.from_obj(copy.fields[0].to_obj())
    extra.fieldPath = "retired_column"
    copy.fields = [*copy.fields, extra]
    return copy


# --- the lineage graph ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphShape:
    """Layer sizes of the generated graph: raw datasets -> jobs -> derived datasets -> features -> models."""

    raw: int
    jobs: int
    derived: int
    features: int
    models: int

    @classmethod
    def for_entities(cls, entities: int) -> GraphShape:
        raw, jobs, derived, features = (int(entities * share) for share in (0.30, 0.15, 0.30, 0.20))
        return cls(raw, jobs, derived, features, entities - raw - jobs - derived - features)


@dataclass(frozen=True)
class DeclaredLineage:
    """One aspect's lineage pairs, in data-flow order, as the mirror indexes them."""

    urn: str
    aspect_name: str
    pairs: tuple[tuple[str, str], ...]


def layered_graph(entities: int, edges: int, window: int = 400, seed: int = 7) -> Iterator[DeclaredLineage]:
    """A layered lineage graph with locality: each entity's upstreams come from a window of the layer above
    (around its proportional position), so a change reaches tens to hundreds of models, not the whole graph.
    The edge budget is spread evenly over the declaring entities (jobs: inputs plus 2 outputs; derived
    datasets: upstreams; features: sources; models: features plus 1 training job)."""
    rng = random.Random(seed)
    shape = GraphShape.for_entities(entities)
    raw = [dataset_urn(index) for index in range(shape.raw)]
    derived = [dataset_urn(shape.raw + index) for index in range(shape.derived)]
    jobs = [
        f"urn:li:dataJob:(urn:li:dataFlow:(airflow,dag_{index // 20},prod),task_{index})" for index in range(shape.jobs)
    ]
    features = [f"urn:li:mlFeature:(features_{index // 50},feature_{index})" for index in range(shape.features)]
    models = [f"urn:li:mlModel:(urn:li:dataPlatform:mlflow,model_{index},PROD)" for index in range(shape.models)]
    declaring = shape.jobs + shape.derived + shape.features + shape.models
    base = max(2, edges // declaring)
    extra_share = max(0.0, edges / declaring - base)

    def budget() -> int:
        return base + (1 if rng.random() < extra_share else 0)

    def near(layer: list[str], position: float, count: int) -> list[str]:
        centre = int(position * len(layer))
        low, high = max(0, centre - window // 2), min(len(layer), centre + window // 2)
        return rng.sample(layer[low:high], min(count, high - low))

    for index, job in enumerate(jobs):
        position = index / len(jobs)
        inputs = near(raw, position, budget() - 2)
        outputs = near(derived, position, 2)
        pairs = tuple((source, job) for source in inputs) + tuple((job, output) for output in outputs)
        yield DeclaredLineage(job, "dataJobInputOutput", pairs)
    for index, dataset in enumerate(derived):
        upstreams = near(raw, index / len(derived), budget())
        yield DeclaredLineage(dataset, "upstreamLineage", tuple((source, dataset) for source in upstreams))
    for index, feature in enumerate(features):
        sources = near(derived, index / len(features), budget())
        yield DeclaredLineage(feature, "mlFeatureProperties", tuple((source, feature) for source in sources))
    for index, model in enumerate(models):
        position = index / len(models)
        inputs = near(features, position, budget() - 1) + near(jobs, position, 1)
        yield DeclaredLineage(model, "mlModelProperties", tuple((source, model) for source in inputs))


def deployment_of(model_urn: str) -> str:
    return model_urn.replace("urn:li:mlModel:", "urn:li:mlModelDeployment:").replace("mlflow", "sagemaker")
