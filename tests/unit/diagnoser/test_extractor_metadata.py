"""Metadata extractors: schema history, assertions, dataset profiles, timing and lineage relevance."""

from __future__ import annotations

from typing import Any

from contracts.context_snapshot import ContextSnapshot, LineagePath
from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.extractors.assertions import assertion_status, assertions_evidence
from services.diagnoser.extractors.change_timing import change_timing_evidence, regression_time_ms
from services.diagnoser.extractors.dataset_profiles import dataset_profiles_evidence
from services.diagnoser.extractors.lineage_relevance import asset_distance, lineage_relevance_evidence, relevance
from services.diagnoser.extractors.schema_history import schema_history_evidence
from services.diagnoser.inputs import MetadataChangeRecord
from services.diagnoser.schema_fields import field_name

DATASET = "urn:li:dataset:(urn:li:dataPlatform:hive,raw.events,PROD)"
UPSTREAM = "urn:li:dataset:(urn:li:dataPlatform:kafka,events,PROD)"
ELSEWHERE = "urn:li:dataset:(urn:li:dataPlatform:hive,other,PROD)"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,m,PROD)"
JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,f,PROD),train)"


def field(path: str, native: str, type_name: str, description: str = "") -> dict[str, Any]:
    return {
        "fieldPath": path,
        "nativeDataType": native,
        "type": {"type": {f"com.linkedin.schema.{type_name}Type": {}}},
        "description": description,
    }


def record(
    aspect: str, previous: Any, current: Any, urn: str = DATASET, time_ms: int | None = 1_000
) -> MetadataChangeRecord:
    return MetadataChangeRecord(
        entity_urn=urn,
        entity_type="dataset",
        aspect=aspect,
        change_type="UPSERT",
        time_ms=time_ms,
        actor=None,
        previous=previous,
        current=current,
    )


def schema(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"schemaName": "events", "fields": list(fields)}


def snapshot() -> ContextSnapshot:
    path = LineagePath(
        direction="upstream",
        urns=(UPSTREAM, DATASET, JOB, MODEL),
        relationships=("a", "b", "c"),
        via_lineage=True,
        stop_reason="root",
    )
    return ContextSnapshot(
        model_urn=MODEL, provider="file", fetched_at="2025-03-10T00:00:00+00:00", upstream_paths=(path,)
    )


def test_rename_removal_and_retype_from_schema_versions() -> None:
    before = schema(
        field("amount", "NUMBER", "Number"),
        field("country", "VARCHAR", "String"),
        field("age", "NUMBER", "Number"),
        field("note", "VARCHAR", "String"),
    )
    after = schema(
        field("txn_amount", "NUMBER", "Number"),
        field("country", "VARCHAR", "String"),
        field("age", "VARCHAR", "String"),
    )
    item = schema_history_evidence([record("schemaMetadata", before, after)], ["amount", "age"], DATASET, None, None)
    values = item.values
    assert [(r["old"], r["new"]) for r in values["renamed"]] == [("amount", "txn_amount")]
    assert values["removed"] == ["note"]
    assert values["retyped"][0]["field"] == "age" and values["retyped"][0]["after"] == "VARCHAR"
    assert values["read_columns_renamed_or_removed"] == ["amount"] and values["read_columns_retyped"] == ["age"]
    assert item.strength == 1.0


def test_schema_changes_off_the_lineage_or_after_the_regression_do_not_count() -> None:
    before, after = schema(field("a", "INT", "Number")), schema(field("b", "INT", "Number"))
    context = snapshot()
    regression = regression_time_ms(context.fetched_at)
    off_path = record("schemaMetadata", before, after, urn=ELSEWHERE)
    late = record("schemaMetadata", before, after, time_ms=(regression or 0) + 1)
    item = schema_history_evidence([off_path, late], ["a"], DATASET, context, regression)
    assert item.values["records"] == 1 and item.values["renamed"] == [] and item.strength == 0.0


def test_failing_assertion_run_on_the_models_dataset() -> None:
    run = record(
        "assertionRunEvent",
        None,
        {"assertionUrn": "urn:li:assertion:nulls", "asserteeUrn": DATASET, "result": {"type": "FAILURE"}},
        urn="urn:li:assertion:nulls",
    )
    item = assertions_evidence([run], None, DATASET, None)
    assert item.values["failing"] == ["urn:li:assertion:nulls"] and item.strength == 1.0


def test_assertion_results_and_field_urns_are_read_as_words_and_names() -> None:
    assert [assertion_status(r) for r in ("SUCCESS", "failure", "ERROR", None, "SKIPPED")] == [
        "passing",
        "failing",
        "failing",
        "unknown",
        "unknown",
    ]
    assert field_name(f"urn:li:schemaField:({DATASET},account_age_months)") == "account_age_months"
    assert field_name("plain_column") == "plain_column"


def test_dataset_profile_null_proportion_rise() -> None:
    profile = record(
        "datasetProfile",
        {"rowCount": 100, "fieldProfiles": [{"fieldPath": "age", "nullCount": 1}]},
        {"rowCount": 100, "fieldProfiles": [{"fieldPath": "age", "nullProportion": 0.31}]},
    )
    item = dataset_profiles_evidence([profile], DATASET, None, None, central_diagnosis_policy())
    assert item.values["null_rises"]["age"]["rise"] == 0.3 and item.strength == 1.0


def test_timing_splits_changes_before_and_after_the_regression() -> None:
    regression = regression_time_ms("2025-03-10T00:00:00+00:00")
    assert regression is not None
    early = record("schemaMetadata", None, None, time_ms=regression - 7_200_000)
    late = record("datasetProfile", None, None, time_ms=regression + 1)
    item = change_timing_evidence([early, late], regression)
    assert len(item.values["before"]) == 1 and len(item.values["after"]) == 1
    assert item.values["hours_from_last_change_to_regression"] == 2.0


def test_lineage_distance_and_relevance() -> None:
    context = snapshot()
    assert asset_distance(DATASET, DATASET, context) == 0
    assert asset_distance(UPSTREAM, DATASET, context) == 3
    assert relevance(ELSEWHERE, DATASET, context) == 0.0
    assert relevance(ELSEWHERE, None, None) == 0.5
    item = lineage_relevance_evidence([UPSTREAM, ELSEWHERE], DATASET, context)
    assert item.values["relevant"] == [UPSTREAM] and item.values["assets"][UPSTREAM]["distance"] == 3
