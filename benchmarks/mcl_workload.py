"""Generated workloads for the MCL benchmarks, deterministic for a given seed: a burst of MetadataChangeLog
records as an ingestion run emits them (shared by ModelGuard and datahub-actions in ``make bench``), and a
large layered lineage graph.

The MCL burst: ``records`` Confluent-framed Avro records (the MCL schema shipped in acryl-datahub, schema ids 18
for the versioned topic and 19 for the timeseries topic), keyed by entity urn, about 1.2 kB on average. 70% carry
aspects ModelGuard's mirror does not keep (dataset properties, browse paths, sub-types, tags, platform
instances, usage statistics, operations); 30% carry aspects it keeps (schemas, most with their previous value,
a tenth of them dropping a column; upstream lineage; ownership; status; job inputs and outputs; assertion runs).
It opens with a preamble that puts ML features and models (with deployments and owners) downstream of the first
datasets, so some schema changes are risks. Lineage stays within pipelines of 20 tables (an earlier table of the
same pipeline upstream, a job reading one table and writing another of its pipeline), as in a real catalogue, not a
random graph in which every table ends up upstream of every model. Aspect values are written by the SDK's own
classes, as DataHub writes them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datahub.emitter.serialization_helper import pre_json_transform
from datahub.metadata.schema_classes import (
    AssertionResultClass,
    AssertionResultTypeClass,
    AssertionRunEventClass,
    AssertionRunStatusClass,
    AuditStampClass,
    BrowsePathEntryClass,
    BrowsePathsV2Class,
    DataJobInputOutputClass,
    DataPlatformInstanceClass,
    DatasetLineageTypeClass,
    DatasetPropertiesClass,
    DatasetUsageStatisticsClass,
    GlobalTagsClass,
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
    TagAssociationClass,
    TimeStampClass,
    UpstreamClass,
    UpstreamLineageClass,
    _Aspect,
)

from libs.datahub.mcl.avro_schema import shipped_mcl_schema
from libs.datahub.mcl.wire import encode_confluent

VERSIONED_SCHEMA_ID = 18
TIMESERIES_SCHEMA_ID = 19
VERSIONED, TIMESERIES = "versioned", "timeseries"
BURST_TIME_MS = 1_735_689_600_000
DATASETS = 10_000
PIPELINE = 20
"""Lineage stays within groups of this many datasets (a pipeline's tables), as it clusters in a real catalogue."""
MODEL_FED = 100
"""Datasets with ML features and models downstream (the first ones)."""
_STAMP = AuditStampClass(time=BURST_TIME_MS, actor="urn:li:corpuser:ingestion")

IRRELEVANT_WEIGHTS = {
    "datasetProperties": 22,
    "browsePathsV2": 10,
    "subTypes": 8,
    "globalTags": 6,
    "dataPlatformInstance": 6,
    "datasetUsageStatistics": 10,
    "operation": 8,
}
RELEVANT_WEIGHTS = {
    "schemaMetadata": 6,
    "upstreamLineage": 8,
    "ownership": 6,
    "status": 6,
    "dataJobInputOutput": 2,
    "assertionRunEvent": 2,
}
TIMESERIES_ASPECTS = frozenset({"datasetUsageStatistics", "operation", "assertionRunEvent"})


def dataset_urn(index: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:snowflake,warehouse.sales.table_{index},PROD)"


def job_urn(index: int) -> str:
    return f"urn:li:dataJob:(urn:li:dataFlow:(airflow,dag_{index // 10},prod),task_{index})"


def deployment_of(model_urn: str) -> str:
    return model_urn.replace("urn:li:mlModel:", "urn:li:mlModelDeployment:").replace("mlflow", "sagemaker")


# --- the MCL burst -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamRecord:
    topic: str
    """:data:`VERSIONED` or :data:`TIMESERIES`: which MCL topic DataHub writes the aspect to."""
    key: bytes
    value: bytes
    aspect_name: str


@dataclass(frozen=True)
class MclStream:
    records: tuple[StreamRecord, ...]
    """The preamble first, then the burst."""
    preamble: int
    mirrored: int
    """How many records carry an aspect the mirror keeps (the preamble included)."""

    @property
    def average_bytes(self) -> float:
        return sum(len(record.value) for record in self.records) / max(1, len(self.records))

    def on(self, topic: str) -> list[StreamRecord]:
        return [record for record in self.records if record.topic == topic]


def burst_stream(records: int = 100_000, seed: int = 7) -> MclStream:
    """``records`` MCL records in all (preamble included), the same bytes for the same arguments."""
    rng = random.Random(seed)
    texts = _aspect_texts()
    preamble = _preamble()
    out: list[StreamRecord] = list(preamble)
    mirrored = len(preamble)
    names = [*IRRELEVANT_WEIGHTS, *RELEVANT_WEIGHTS]
    weights = [*IRRELEVANT_WEIGHTS.values(), *RELEVANT_WEIGHTS.values()]
    for sequence in range(max(0, records - len(preamble))):
        aspect_name = rng.choices(names, weights)[0]
        index = rng.randrange(DATASETS)
        urn, entity_type, previous = dataset_urn(index), "dataset", None
        text = texts[aspect_name]
        if aspect_name == "schemaMetadata":
            roll = rng.random()
            previous = None if roll < 0.2 else texts["schemaMetadata:wider"] if roll < 0.3 else text
        elif aspect_name == "upstreamLineage":
            for slot in range(3):
                text = text.replace(f"@UP{slot}@", _upstream_of(index, rng))
        elif aspect_name == "dataJobInputOutput":
            group = index // PIPELINE * PIPELINE
            urn, entity_type = job_urn(index // PIPELINE), "dataJob"
            output = dataset_urn(group + rng.randrange(PIPELINE))
            text = text.replace("@IN@", dataset_urn(index)).replace("@OUT@", output)
        elif aspect_name == "assertionRunEvent":
            urn, entity_type = f"urn:li:assertion:bench-{index % 500}", "assertion"
            text = text.replace("@ASSERTEE@", dataset_urn(index)).replace("@RUN@", f"run-{sequence}")
            text = text.replace("@TIME@", str(BURST_TIME_MS + sequence))
        elif aspect_name in ("datasetUsageStatistics", "operation"):
            text = text.replace(str(BURST_TIME_MS), str(BURST_TIME_MS + sequence))
        elif aspect_name not in TIMESERIES_ASPECTS and rng.random() < 0.6:
            previous = text  # re-ingested unchanged: DataHub sends the previous value too
        topic = TIMESERIES if aspect_name in TIMESERIES_ASPECTS else VERSIONED
        version = 0 if aspect_name in TIMESERIES_ASPECTS else 1 + sequence % 7
        out.append(_record(topic, urn, entity_type, aspect_name, text, previous, version))
        mirrored += aspect_name in RELEVANT_WEIGHTS
    return MclStream(tuple(out[:records]), min(len(preamble), records), mirrored)


def _upstream_of(index: int, rng: random.Random) -> str:
    """An upstream of dataset ``index``: an earlier table of its pipeline, or for a pipeline's first table one of the
    raw sources outside the stream."""
    group = index // PIPELINE * PIPELINE
    if index == group:
        return f"urn:li:dataset:(urn:li:dataPlatform:kafka,raw.events_{group // PIPELINE},PROD)"
    return dataset_urn(group + rng.randrange(index - group))


def _aspect_texts() -> dict[str, str]:
    columns = [
        SchemaFieldClass(
            fieldPath=f"column_{index}",
            type=SchemaFieldDataTypeClass(NumberTypeClass() if index % 2 else StringTypeClass()),  # type: ignore[no-untyped-call]
            nativeDataType="NUMBER(38,0)" if index % 2 else "VARCHAR(64)",
            nullable=index % 3 == 0,
            description=f"Column {index}.",
        )
        for index in range(10)
    ]
    schema = SchemaMetadataClass(
        schemaName="table",
        platform="urn:li:dataPlatform:snowflake",
        version=0,
        hash="",
        platformSchema=OtherSchemaClass(rawSchema=""),
        fields=columns,
        lastModified=_STAMP,
    )
    wider = SchemaMetadataClass.from_obj(schema.to_obj())
    retired = SchemaFieldClass.from_obj(columns[0].to_obj())
    retired.fieldPath = "retired_column"
    wider.fields = [*wider.fields, retired]
    aspects: dict[str, _Aspect] = {
        "datasetProperties": DatasetPropertiesClass(
            name="table",
            qualifiedName="warehouse.sales.table",
            description="Daily sales facts, one row per order line, loaded by the nightly ELT job from the "
            "order service's replica; amounts in the order's currency, converted at the day's closing rate.",
            customProperties={
                "owner_team": "sales-data",
                "tier": "2",
                "retention_days": "730",
                "pii": "false",
                "source_system": "orders-replica",
                "load_job": "elt.nightly.sales",
                "clustering_key": "LINEAR(order_date, region)",
                "is_transient": "false",
                "row_count_estimate": "184467440",
                "bytes_estimate": "23870513152",
            },
            externalUrl="https://app.snowflake.com/prod_account/#/data/databases/WAREHOUSE/schemas/SALES/table/TABLE",
            created=TimeStampClass(BURST_TIME_MS - 86_400_000 * 400),
            lastModified=TimeStampClass(BURST_TIME_MS),
        ),
        "browsePathsV2": BrowsePathsV2Class(
            path=[BrowsePathEntryClass(id="prod"), BrowsePathEntryClass(id="warehouse"), BrowsePathEntryClass("sales")]
        ),
        "subTypes": SubTypesClass(typeNames=["Table"]),
        "globalTags": GlobalTagsClass(
            tags=[TagAssociationClass("urn:li:tag:sales"), TagAssociationClass("urn:li:tag:gold")]
        ),
        "dataPlatformInstance": DataPlatformInstanceClass(
            platform="urn:li:dataPlatform:snowflake",
            instance="urn:li:dataPlatformInstance:(urn:li:dataPlatform:snowflake,prod_account)",
        ),
        "datasetUsageStatistics": DatasetUsageStatisticsClass(
            timestampMillis=BURST_TIME_MS, uniqueUserCount=4, totalSqlQueries=120, topSqlQueries=["select 1"]
        ),
        "operation": OperationClass(
            timestampMillis=BURST_TIME_MS,
            operationType=OperationTypeClass.INSERT,
            lastUpdatedTimestamp=BURST_TIME_MS,
            actor="urn:li:corpuser:etl",
            numAffectedRows=1200,
        ),
        "schemaMetadata": schema,
        "schemaMetadata:wider": wider,
        "upstreamLineage": UpstreamLineageClass(
            upstreams=[
                UpstreamClass(dataset=f"@UP{slot}@", type=DatasetLineageTypeClass.TRANSFORMED, auditStamp=_STAMP)
                for slot in range(3)
            ]
        ),
        "ownership": OwnershipClass(
            owners=[
                OwnerClass(owner="urn:li:corpuser:analyst", type=OwnershipTypeClass.TECHNICAL_OWNER),
                OwnerClass(owner="urn:li:corpGroup:sales-data", type=OwnershipTypeClass.BUSINESS_OWNER),
            ],
            lastModified=_STAMP,
        ),
        "status": StatusClass(removed=False),
        "dataJobInputOutput": DataJobInputOutputClass(inputDatasets=["@IN@"], outputDatasets=["@OUT@"]),
        "assertionRunEvent": AssertionRunEventClass(
            timestampMillis=BURST_TIME_MS,
            runId="@RUN@",
            asserteeUrn="@ASSERTEE@",
            status=AssertionRunStatusClass.COMPLETE,
            assertionUrn="urn:li:assertion:bench",
            result=AssertionResultClass(type=AssertionResultTypeClass.SUCCESS),
        ),
    }
    texts = {name: _json_text(aspect) for name, aspect in aspects.items()}
    texts["assertionRunEvent"] = texts["assertionRunEvent"].replace(str(BURST_TIME_MS), "@TIME@")
    return texts


def _preamble() -> list[StreamRecord]:
    """One feature per model-fed dataset, one model (with a deployment and owners) per 5 features."""
    aspects: list[tuple[str, str, _Aspect]] = []
    features = [f"urn:li:mlFeature:(bench_features,feature_{index})" for index in range(MODEL_FED)]
    for index, feature in enumerate(features):
        aspects.append((feature, "mlFeatureProperties", MLFeaturePropertiesClass(sources=[dataset_urn(index)])))
    for index in range(0, MODEL_FED, 5):
        model = f"urn:li:mlModel:(urn:li:dataPlatform:mlflow,bench_model_{index // 5},PROD)"
        properties = MLModelPropertiesClass(mlFeatures=features[index : index + 5], deployments=[deployment_of(model)])
        owners = OwnershipClass(
            owners=[OwnerClass(owner="urn:li:corpuser:ml", type=OwnershipTypeClass.TECHNICAL_OWNER)]
        )
        aspects += [(model, "mlModelProperties", properties), (model, "ownership", owners)]
    return [_record(VERSIONED, urn, urn.split(":")[2], name, _json_text(aspect), None) for urn, name, aspect in aspects]


def _record(
    topic: str, urn: str, entity_type: str, aspect_name: str, text: str, previous: str | None, version: int = 1
) -> StreamRecord:
    record = {
        "entityType": entity_type,
        "entityUrn": urn,
        "changeType": "UPSERT",
        "aspectName": aspect_name,
        "aspect": {"value": text.encode(), "contentType": "application/json"},
        "previousAspectValue": None
        if previous is None
        else {"value": previous.encode(), "contentType": "application/json"},
        "systemMetadata": _system_metadata(version),
        "previousSystemMetadata": None if previous is None else _system_metadata(version - 1),
        "created": {"time": BURST_TIME_MS, "actor": "urn:li:corpuser:ingestion"},
    }
    schema_id = TIMESERIES_SCHEMA_ID if topic == TIMESERIES else VERSIONED_SCHEMA_ID
    return StreamRecord(topic, urn.encode(), encode_confluent(schema_id, record, shipped_mcl_schema()), aspect_name)


def _system_metadata(version: int) -> dict[str, object]:
    """What DataHub's GMS writes for an ingestion run's upsert."""
    return {
        "lastObserved": BURST_TIME_MS,
        "runId": "snowflake-2025_01_01-00_00_00-ab12cd",
        "lastRunId": "snowflake-2024_12_31-00_00_00-ef34gh",
        "pipelineName": "urn:li:dataHubIngestionSource:snowflake-prod",
        "registryName": "unknownRegistry",
        "registryVersion": "0.0.0.0-dev",
        "properties": {"clientId": "acryl-datahub", "clientVersion": "1.7.0.17", "appSource": "ingestion"},
        "version": str(max(version, 0)),
    }


def _json_text(aspect: _Aspect) -> str:
    return json.dumps(pre_json_transform(aspect.to_obj()), separators=(",", ":"))


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


def graph_aspects(entities: int, edges: int, seed: int = 7) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """The layered graph as the aspects DataHub would hold: (urn, entity type, aspect name, aspect JSON) of every
    job's inputs and outputs, derived dataset's upstreams, feature's sources, and model's features, training job,
    deployment and owners."""
    stamp = {"time": BURST_TIME_MS, "actor": "urn:li:corpuser:etl"}
    for declared in layered_graph(entities, edges, seed=seed):
        urn, pairs = declared.urn, declared.pairs
        upstream = [source for source, target in pairs if target == urn]
        if declared.aspect_name == "dataJobInputOutput":
            outputs = [target for source, target in pairs if source == urn]
            yield urn, "dataJob", "dataJobInputOutput", {"inputDatasets": upstream, "outputDatasets": outputs}
        elif declared.aspect_name == "upstreamLineage":
            upstreams = [{"auditStamp": stamp, "dataset": source, "type": "TRANSFORMED"} for source in upstream]
            yield urn, "dataset", "upstreamLineage", {"upstreams": upstreams}
        elif declared.aspect_name == "mlFeatureProperties":
            yield urn, "mlFeature", "mlFeatureProperties", {"sources": upstream}
        else:
            properties = {
                "customProperties": {},
                "mlFeatures": [source for source in upstream if source.startswith("urn:li:mlFeature:")],
                "trainingJobs": [source for source in upstream if source.startswith("urn:li:dataJob:")],
                "deployments": [deployment_of(urn)],
                "tags": [],
            }
            owners = {"owners": [{"owner": "urn:li:corpuser:ml-owner", "type": "TECHNICAL_OWNER"}]}
            yield urn, "mlModel", "mlModelProperties", properties
            yield urn, "mlModel", "ownership", owners


def write_mcp_file(path: Path, aspects: Iterable[tuple[str, str, str, dict[str, Any]]]) -> int:
    """Aspects as an MCP JSON file (``aspect.json`` form, as ``datahub`` file sinks write); how many were written."""
    count = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for urn, entity_type, aspect_name, aspect_json in aspects:
            entry = {
                "entityType": entity_type,
                "entityUrn": urn,
                "changeType": "UPSERT",
                "aspectName": aspect_name,
                "aspect": {"json": aspect_json},
            }
            out.write(("," if count else "") + "\n" + json.dumps(entry, separators=(",", ":")))
            count += 1
        out.write("\n]\n")
    return count
