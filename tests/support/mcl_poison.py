"""Malformed MetadataChangeLog records as an outsider writes them, and good ones from DataHub's golden files.

Each :class:`PoisonCase` is the raw bytes of one Kafka record (Confluent Avro or JSON, as DataHub's MCL
topics may carry) and the verdict the context service's intake owes it: dead-lettered with a reason, or
skipped on purpose with a reason. Good records come from real connector output in
``<repo>/../shared/datahub-golden`` (read in place, never copied), each an aspect the mirror keeps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from libs.datahub.mcl.avro_schema import shipped_mcl_schema
from libs.datahub.mcl.prefilter import mirrored_aspects
from libs.datahub.mcl.record_builder import mcl_record
from libs.datahub.mcl.wire import encode_confluent

GOLDEN_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "datahub-golden"
GOOD_FILES = (
    "iceberg_profile_mcps_golden.json",
    "mlflow_mcps_golden.json",
    "ge_mcps_golden.json",
    "sql-queries_lazy-schema-loading.json",
    "airflow_v2_athena_operator.json",
    "vertexai_mcps_golden.json",
)
SCHEMA_ID = 18  # the newest versioned MCL schema id; the shipped schema without a registry
CREATED = 1_750_000_000_000

Verdict = Literal["applied", "skipped", "dead_lettered"]

DATASET = "urn:li:dataset:(urn:li:dataPlatform:snowflake,poison.db.orders,PROD)"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,poison-model,PROD)"
JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,poison_dag,prod),load_orders)"
ASSERTION = "urn:li:assertion:poison-orders-not-null"
FEATURE = "urn:li:mlFeature:(poison_features,tenure_days)"


@dataclass(frozen=True)
class PoisonCase:
    name: str
    raw: bytes
    verdict: Verdict
    reason: str  # the dead-letter reason (mcl-...) or the skip reason


@dataclass(frozen=True)
class GoodRecord:
    name: str
    raw: bytes
    urn: str
    aspect_name: str


OUTSIDER_FILES = tuple(
    sorted((Path(__file__).resolve().parents[2] / "fixtures" / "repos").glob("*/datahub/metadata.json"))[:6]
)
"""Where the shared folder is absent (a CI clone elsewhere): the DataHub catalogues an outsider wrote for the
hand-made repositories, in DataHub's MCP file format, so the suite still runs on records nobody here wrote."""


def good_files() -> tuple[Path, ...]:
    golden = tuple(GOLDEN_DIR / name for name in GOOD_FILES)
    return golden if all(path.is_file() for path in golden) else OUTSIDER_FILES


def golden_available() -> bool:
    """Whether there are good records to interleave (the golden files, else the outsider's catalogues)."""
    return bool(good_files())


def _golden_aspect(entry: dict[str, Any]) -> dict[str, Any]:
    aspect = entry["aspect"]
    return aspect["json"] if "json" in aspect else json.loads(aspect["value"])


def good_records(limit_per_file: int = 4) -> list[GoodRecord]:
    """Mirrored aspects of each good file (its first ``limit_per_file`` distinct urn/aspect pairs), as Avro."""
    records: list[GoodRecord] = []
    for path in good_files():
        name = path.name if path.parent == GOLDEN_DIR else path.parent.parent.name
        seen: set[tuple[str, str]] = set()
        for entry in json.loads(path.read_text(encoding="utf-8")):
            aspect_name = entry.get("aspectName")
            key = (entry.get("entityUrn"), aspect_name)
            if aspect_name not in mirrored_aspects() or key in seen or entry.get("changeType") != "UPSERT":
                continue
            seen.add(key)
            record = mcl_record(entry["entityUrn"], aspect_name, _golden_aspect(entry), created_millis=CREATED)
            raw = avro(record)
            records.append(GoodRecord(f"{name}:{aspect_name}:{len(seen)}", raw, entry["entityUrn"], aspect_name))
            if len(seen) >= limit_per_file:
                break
    return records


def avro(record: dict[str, Any], schema_id: int = SCHEMA_ID) -> bytes:
    return encode_confluent(schema_id, record, shipped_mcl_schema())


def as_json(record: dict[str, Any]) -> bytes:
    """The record JSON-encoded as DataHub's JSON serialisation writes it (aspect values as JSON strings)."""

    def text(generic: dict[str, Any] | None) -> dict[str, Any] | None:
        if generic is None:
            return None
        value = generic["value"]
        return {**generic, "value": value.decode() if isinstance(value, bytes) else value}

    document = {**record, "aspect": text(record["aspect"]), "previousAspectValue": text(record["previousAspectValue"])}
    return json.dumps(document).encode()


def _record(urn: str, aspect_name: str, aspect: dict[str, Any] | None, **fields: Any) -> dict[str, Any]:
    return {**mcl_record(urn, aspect_name, aspect, created_millis=CREATED), **fields}


def _with_value(record: dict[str, Any], value: bytes, content_type: str = "application/json") -> dict[str, Any]:
    return {**record, "aspect": {"value": value, "contentType": content_type}}


OWNERSHIP = {"owners": [{"owner": "urn:li:corpuser:ana", "type": "DATAOWNER"}]}
STATUS = {"removed": False}
PROPERTIES = {"name": "orders", "customProperties": {}, "tags": []}
MODEL_PROPERTIES = {"customProperties": {}, "tags": [], "trainingJobs": [JOB]}
UPSTREAM = {
    "upstreams": [
        {"auditStamp": {"time": 0, "actor": "urn:li:corpuser:ana"}, "dataset": DATASET, "type": "TRANSFORMED"}
    ]
}


def _schema(columns: int, *, type_name: str = "com.linkedin.schema.StringType") -> dict[str, Any]:
    return {
        "schemaName": "orders",
        "platform": "urn:li:dataPlatform:snowflake",
        "version": 0,
        "created": {"time": 0, "actor": "urn:li:corpuser:ana"},
        "lastModified": {"time": 0, "actor": "urn:li:corpuser:ana"},
        "hash": "",
        "platformSchema": {"com.linkedin.schema.MySqlDDL": {"tableSchema": ""}},
        "fields": [
            {
                "fieldPath": f"column_{i:05d}_with_a_long_descriptive_name_for_the_warehouse",
                "nullable": True,
                "type": {"type": {type_name: {}}},
                "nativeDataType": "VARCHAR(16777216)",
                "recursive": False,
                "isPartOfKey": False,
                "description": "a column of the orders table",
            }
            for i in range(columns)
        ],
    }


def _run_event(millis: int, extra: str = "") -> bytes:
    text = (
        f'{{"timestampMillis": {millis}, "runId": "run-{millis}", "assertionUrn": "{ASSERTION}",'
        f' "asserteeUrn": "{DATASET}", "status": "COMPLETE", "result": {{"type": "SUCCESS"{extra}}}}}'
    )
    return text.encode()


def poison_cases() -> list[PoisonCase]:
    """Malformed records of every class the intake refuses, and valid ones it skips on purpose."""
    good_ownership = avro(_record(DATASET, "ownership", OWNERSHIP))
    cases: list[PoisonCase] = []

    def dead(name: str, raw: bytes, reason: str) -> None:
        cases.append(PoisonCase(name, raw, "dead_lettered", reason))

    # framing and Avro
    dead("empty", b"", "mcl-too-short")
    dead("three-bytes", b"\x00\x00\x01", "mcl-too-short")
    dead("bad-magic", b"\x07" + good_ownership[1:], "mcl-bad-magic")
    dead("unknown-schema-id-999", b"\x00" + (999).to_bytes(4, "big") + good_ownership[5:], "mcl-unknown-schema-id")
    dead("old-schema-id-3", b"\x00" + (3).to_bytes(4, "big") + good_ownership[5:], "mcl-unknown-schema-id")
    dead("truncated-avro", good_ownership[: len(good_ownership) // 2], "mcl-corrupt-avro")
    dead("trailing-bytes", good_ownership + b"\x00\x01", "mcl-trailing-bytes")
    # JSON envelope
    dead("json-not-json", b'{"entityType": "dataset", ', "mcl-not-json")
    dead("json-nan-envelope", b'{"entityType": "dataset", "entityUrn": NaN}', "mcl-non-finite-number")
    json_ownership = json.loads(as_json(_record(DATASET, "ownership", OWNERSHIP)))
    dead("json-no-entity-type", json.dumps({**json_ownership, "entityType": None}).encode(), "mcl-bad-envelope")
    dead(
        "json-aspect-name-list",
        json.dumps({**json_ownership, "aspectName": ["ownership"]}).encode(),
        "mcl-bad-envelope",
    )
    dead(
        "json-change-type-merge",
        json.dumps({**json_ownership, "changeType": "MERGE"}).encode(),
        "mcl-unknown-change-type",
    )
    # URNs
    dead(
        "urn-two-parts",
        avro(
            _record(
                DATASET,
                "ownership",
                OWNERSHIP,
                entityUrn="urn:li:dataset:(urn:li:dataPlatform:snowflake,poison.orders)",
            )
        ),
        "mcl-bad-urn",
    )
    dead("json-urn-not-an-urn", json.dumps({**json_ownership, "entityUrn": "poison-dataset-1"}).encode(), "mcl-bad-urn")
    dead(
        "urn-unbalanced",
        avro(_record(MODEL, "status", STATUS, entityUrn="urn:li:mlModel:((urn:li:dataPlatform:mlflow,poison,PROD)")),
        "mcl-bad-urn",
    )
    dead("urn-null", avro(_record(DATASET, "status", STATUS, entityUrn=None)), "mcl-bad-urn")
    dead(
        "urn-is-a-model-entity-says-dataset",
        avro(_record(MODEL, "status", STATUS, entityType="dataset")),
        "mcl-urn-entity-mismatch",
    )
    job_as_dataset = json.loads(
        as_json(
            _record(DATASET, "dataJobInputOutput", {"inputDatasets": [], "outputDatasets": []}, entityType="dataJob")
        )
    )
    dead("json-urn-is-a-dataset-entity-says-datajob", json.dumps(job_as_dataset).encode(), "mcl-urn-entity-mismatch")
    dead(
        "unknown-entity-type",
        avro(_record("urn:li:spaceship:enterprise", "status", STATUS, entityType="spaceship")),
        "mcl-unknown-entity-type",
    )
    # aspects and the entity registry
    dead("unknown-aspect", avro(_record(DATASET, "schemaMetadataV2", {"fields": []})), "mcl-unknown-aspect")
    json_unknown = json.loads(as_json(_record(MODEL, "modelCard", {"text": "hi"})))
    dead("json-unknown-aspect", json.dumps(json_unknown).encode(), "mcl-unknown-aspect")
    dead(
        "model-properties-on-a-dataset",
        avro(_record(DATASET, "mlModelProperties", MODEL_PROPERTIES)),
        "mcl-aspect-not-of-entity",
    )
    dead("schema-on-a-model", avro(_record(MODEL, "schemaMetadata", _schema(2))), "mcl-aspect-not-of-entity")
    dead("upstream-lineage-on-a-job", avro(_record(JOB, "upstreamLineage", UPSTREAM)), "mcl-aspect-not-of-entity")
    dead("upsert-without-aspect", avro(_record(DATASET, "ownership", None)), "mcl-missing-aspect")
    json_no_aspect = json.loads(as_json(_record(DATASET, "datasetProperties", None)))
    dead("json-upsert-without-aspect-irrelevant", json.dumps(json_no_aspect).encode(), "mcl-missing-aspect")
    dead(
        "upsert-without-aspect-name",
        avro(_record(DATASET, "ownership", OWNERSHIP, aspectName=None)),
        "mcl-missing-aspect",
    )
    # encodings of the aspect value
    schema_bytes = json.dumps(_schema(3)).encode()
    dead(
        "schema-invalid-utf8",
        avro(_with_value(_record(DATASET, "schemaMetadata", None), schema_bytes.replace(b"orders", b"ord\xffrs", 1))),
        "mcl-invalid-utf8",
    )
    dead(
        "irrelevant-invalid-utf8",
        avro(_with_value(_record(DATASET, "datasetProperties", None), b'{"name": "\xc3\x28"}')),
        "mcl-invalid-utf8",
    )
    dead(
        "run-event-nan",
        avro(
            _with_value(
                _record(ASSERTION, "assertionRunEvent", None),
                _run_event(CREATED, ', "nativeResults": {}, "actualAggValue": NaN'),
            )
        ),
        "mcl-non-finite-number",
    )
    profile = b'{"timestampMillis": 1750000000000, "rowCount": Infinity}'
    dead(
        "irrelevant-profile-infinity",
        avro(_with_value(_record(DATASET, "datasetProfile", None), profile)),
        "mcl-non-finite-number",
    )
    json_minus_inf = json.loads(as_json(_record(MODEL, "mlModelProperties", None)))
    json_minus_inf["aspect"] = {
        "value": '{"customProperties": {}, "hyperParams": [{"name": "lr", "value": -Infinity}]}',
        "contentType": "application/json",
    }
    dead("json-model-minus-infinity", json.dumps(json_minus_inf).encode(), "mcl-non-finite-number")
    dead("aspect-is-a-list", avro(_with_value(_record(DATASET, "status", None), b"[1, 2]")), "mcl-bad-aspect-json")
    dead(
        "aspect-not-json",
        avro(_with_value(_record(DATASET, "ownership", None), b"owners: [ana]")),
        "mcl-bad-aspect-json",
    )
    dead(
        "aspect-protobuf",
        avro(_with_value(_record(DATASET, "ownership", None), b"\x08\x01", "application/x-protobuf")),
        "mcl-unsupported-content-type",
    )
    with_bad_previous = _record(DATASET, "status", STATUS)
    with_bad_previous["previousAspectValue"] = {"value": b'{"removed": NaN}', "contentType": "application/json"}
    dead("previous-value-nan", avro(with_bad_previous), "mcl-non-finite-number")
    # aspects that violate their SDK class
    no_native_type = _schema(2)
    del no_native_type["fields"][0]["nativeDataType"]
    dead("schema-field-without-native-type", avro(_record(DATASET, "schemaMetadata", no_native_type)), "mcl-bad-aspect")
    dead(
        "schema-unknown-union-member",
        avro(_record(DATASET, "schemaMetadata", _schema(2, type_name="com.linkedin.schema.NoSuchType"))),
        "mcl-bad-aspect",
    )
    dead(
        "ownership-owners-not-a-list",
        avro(_record(DATASET, "ownership", {"owners": "urn:li:corpuser:ana"})),
        "mcl-bad-aspect",
    )
    no_type = {"upstreams": [{"auditStamp": {"time": 0, "actor": "urn:li:corpuser:ana"}, "dataset": DATASET}]}
    dead("upstream-without-type", avro(_record(DATASET, "upstreamLineage", no_type)), "mcl-bad-aspect")
    dead(
        "model-training-jobs-a-string",
        avro(_record(MODEL, "mlModelProperties", {**MODEL_PROPERTIES, "trainingJobs": JOB})),
        "mcl-bad-aspect",
    )
    json_status = json.loads(as_json(_record(FEATURE, "status", {"removed": "yes"})))
    dead("json-feature-status-removed-yes", json.dumps(json_status).encode(), "mcl-bad-aspect")
    # sizes beyond the central policy's limit (5 MiB)
    huge_schema = _schema(24_000)
    dead("schema-24000-columns", avro(_record(DATASET, "schemaMetadata", huge_schema)), "mcl-aspect-too-large")
    big_properties = {**PROPERTIES, "description": "x" * (5 * 1024 * 1024 + 1)}
    dead(
        "json-irrelevant-properties-over-5mib",
        as_json(_record(DATASET, "datasetProperties", big_properties)),
        "mcl-aspect-too-large",
    )
    # valid records skipped on purpose
    cases.append(
        PoisonCase(
            "valid-irrelevant-properties",
            avro(_record(DATASET, "datasetProperties", PROPERTIES)),
            "skipped",
            "aspect-not-mirrored",
        )
    )
    browse = {"path": [{"id": "poison"}]}
    cases.append(
        PoisonCase(
            "valid-irrelevant-browse-paths",
            avro(_record(DATASET, "browsePathsV2", browse)),
            "skipped",
            "aspect-not-mirrored",
        )
    )
    return cases


def timeseries_runs() -> list[PoisonCase]:
    """A run event, redelivered twice, then an older run: applied three times (idempotent), then skipped."""
    newest = avro(_with_value(_record(ASSERTION, "assertionRunEvent", None), _run_event(CREATED + 60_000)))
    older = avro(_with_value(_record(ASSERTION, "assertionRunEvent", None), _run_event(CREATED)))
    return [
        PoisonCase("run-event", newest, "applied", ""),
        PoisonCase("run-event-redelivered", newest, "applied", ""),
        PoisonCase("run-event-redelivered-again", newest, "applied", ""),
        PoisonCase("run-event-older", older, "skipped", "older-timeseries-run"),
    ]


def malformed_count(cases: list[PoisonCase]) -> int:
    return sum(1 for case in cases if case.verdict == "dead_lettered")


def classes(cases: list[PoisonCase]) -> set[str]:
    return {case.reason for case in cases if case.verdict == "dead_lettered"}
