"""Reading MCP JSON files into typed acryl-datahub aspects (golden connector output and bad input)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from datahub.emitter.aspect import ASPECT_MAP
from datahub.metadata.schema_classes import (
    AssertionInfoClass,
    AssertionRunEventClass,
    MLFeatureTablePropertiesClass,
    MLModelPropertiesClass,
    NumberTypeClass,
    SchemaMetadataClass,
    StringTypeClass,
    TimeTypeClass,
)

from libs.datahub.mcp_file import MetadataFileError, load_mcp_file
from tests.unit.datahub.datahub_test_inputs import GOLDEN_FILES, golden

# Aspect records per golden file: one per MCP, one per aspect of each MCE snapshot.
EXPECTED_RECORDS = {
    "airflow_v2_athena_operator.json": 25,
    "feast_repository_mces_golden.json": 20,
    "ge_mcps_golden.json": 60,
    "iceberg_profile_mcps_golden.json": 14,
    "mlflow_mcps_golden.json": 33,
    "sagemaker_mces_golden.json": 78,
    "sql-queries_lazy-schema-loading.json": 20,
    "vertexai_mcps_golden.json": 64,
}
ICEBERG_TAXIS = "urn:li:dataset:(urn:li:dataPlatform:iceberg,nyc.taxis,PROD)"


def _write(tmp_path: Path, document: Any, name: str = "metadata.json") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def _iceberg_entries() -> list[dict[str, Any]]:
    return json.loads(golden("iceberg_profile_mcps_golden.json").read_text())


def _schema_entry_index(entries: list[dict[str, Any]]) -> int:
    return next(i for i, e in enumerate(entries) if e["aspectName"] == "schemaMetadata")


@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_every_golden_file_decodes_faithfully_into_sdk_aspect_classes(name: str) -> None:
    loaded = load_mcp_file(golden(name))

    assert len(loaded.records) == EXPECTED_RECORDS[name]
    assert loaded.skipped == ()
    assert loaded.warnings == ()
    for record in loaded.records:
        assert isinstance(record.aspect, ASPECT_MAP[record.aspect_name])
        assert record.urn.startswith(f"urn:li:{record.entity_type}:")
        assert record.location == str(golden(name))


def test_older_value_string_form_decodes_assertions_and_run_results() -> None:
    records = load_mcp_file(golden("ge_mcps_golden.json")).records
    infos = [r.aspect for r in records if r.aspect_name == "assertionInfo"]
    runs = [r.aspect for r in records if r.aspect_name == "assertionRunEvent"]

    assert len(infos) == 20 and len(runs) == 20
    assert all(isinstance(info, AssertionInfoClass) for info in infos)
    first = infos[0].datasetAssertion
    assert first.dataset == "urn:li:dataset:(urn:li:dataPlatform:postgres,postgres1.postgres.public.foo1,PROD)"
    assert first.fields == [f"urn:li:schemaField:({first.dataset},score)"]
    assert first.nativeType == "expect_column_values_to_be_between"
    assert all(isinstance(run, AssertionRunEventClass) for run in runs)
    assert {run.result.type for run in runs} == {"SUCCESS", "FAILURE"}


def test_schema_field_union_members_decode_as_their_declared_types() -> None:
    records = load_mcp_file(golden("iceberg_profile_mcps_golden.json")).records
    schema = next(r.aspect for r in records if r.aspect_name == "schemaMetadata")

    assert isinstance(schema, SchemaMetadataClass)
    types = [type(field.type.type) for field in schema.fields]
    assert types == [NumberTypeClass, TimeTypeClass, NumberTypeClass, NumberTypeClass, NumberTypeClass, StringTypeClass]


def test_mce_snapshots_give_one_record_per_aspect() -> None:
    records = load_mcp_file(golden("sagemaker_mces_golden.json")).records
    model = next(
        r
        for r in records
        if r.aspect_name == "mlModelProperties"
        and r.urn == "urn:li:mlModel:(urn:li:dataPlatform:sagemaker,the-first-model,PROD)"
    )
    tables = [r for r in records if r.aspect_name == "mlFeatureTableProperties"]

    assert model.entity_type == "mlModel"
    assert isinstance(model.aspect, MLModelPropertiesClass)
    assert model.aspect.trainingJobs and model.aspect.deployments and model.aspect.groups
    assert len(tables) == 3 and all(isinstance(t.aspect, MLFeatureTablePropertiesClass) for t in tables)


def test_json_and_value_string_forms_give_equal_aspects(tmp_path: Path) -> None:
    entries = _iceberg_entries()
    index = _schema_entry_index(entries)
    as_value = copy.deepcopy(entries)
    as_value[index]["aspect"] = {
        "value": json.dumps(entries[index]["aspect"]["json"]),
        "contentType": "application/json",
    }

    from_json = load_mcp_file(_write(tmp_path, entries, "json.json")).records[index].aspect
    from_value = load_mcp_file(_write(tmp_path, as_value, "value.json")).records[index].aspect

    assert from_json == from_value


def test_avro_style_union_names_in_aspect_json_are_accepted(tmp_path: Path) -> None:
    entries = _iceberg_entries()
    index = _schema_entry_index(entries)
    entries[index]["aspect"]["json"]["fields"][5]["type"]["type"] = {"com.linkedin.pegasus2avro.schema.StringType": {}}

    schema = load_mcp_file(_write(tmp_path, entries)).records[index].aspect

    assert isinstance(schema.fields[5].type.type, StringTypeClass)


def test_unknown_union_member_is_an_error_not_a_silent_boolean(tmp_path: Path) -> None:
    entries = _iceberg_entries()
    index = _schema_entry_index(entries)
    entries[index]["aspect"]["json"]["fields"][1]["type"]["type"] = {"com.linkedin.schema.TimestampType": {}}
    path = _write(tmp_path, entries)

    with pytest.raises(MetadataFileError) as raised:
        load_mcp_file(path)

    assert raised.value.path == path
    assert raised.value.entry_index == index
    assert "union member com.linkedin.schema.TimestampType" in str(raised.value)
    assert str(raised.value).startswith(f"{path}, entry {index}: ")


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ("[{", "not valid JSON"),
        ('{"entityUrn": "urn:li:dataset:x"}', "expected a JSON array"),
        ('[{"aspectName": "status", "aspect": {"json": {"removed": NaN}}, "entityUrn": "urn:li:corpuser:a"}]', "NaN"),
        # read as infinity, which no event can carry on
        ('[{"aspectName": "status", "aspect": {"json": {"x": 1e999}}, "entityUrn": "urn:li:corpuser:a"}]', "1e999"),
    ],
)
def test_malformed_files_raise_one_error_naming_the_file(tmp_path: Path, document: str, expected: str) -> None:
    path = _write(tmp_path, document)

    with pytest.raises(MetadataFileError) as raised:
        load_mcp_file(path)

    assert raised.value.path == path
    assert expected in str(raised.value)


STATUS_MCP = {
    "entityType": "dataset",
    "entityUrn": "urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)",
    "changeType": "UPSERT",
    "aspectName": "status",
    "aspect": {"json": {"removed": False}},
}


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        ("not an object", "expected an object"),
        ({"foo": 1}, "neither an MCP"),
        ({**STATUS_MCP, "aspect": {"json": {"removed": "yes"}}}, "does not"),
        ({**STATUS_MCP, "entityUrn": "dataset-without-urn-prefix"}, "not a DataHub urn"),
        ({**STATUS_MCP, "entityType": "mlModel"}, "does not match the entity type"),
        ({**STATUS_MCP, "aspect": {"value": "{not json", "contentType": "application/json"}}, "not valid JSON"),
        ({**STATUS_MCP, "aspect": {"something": 1}}, 'neither "json" nor "value"'),
        ({**STATUS_MCP, "aspect": {"json": [1, 2]}}, "must be a JSON object"),
        ({"proposedSnapshot": {"a": {}, "b": {}}}, "exactly one snapshot member"),
        ({"proposedSnapshot": {"com.linkedin.pegasus2avro.metadata.snapshot.DatasetSnapshot": {}}}, "proposedSnapshot"),
    ],
)
def test_malformed_entries_raise_with_path_and_entry_index(tmp_path: Path, broken: Any, expected: str) -> None:
    path = _write(tmp_path, [STATUS_MCP, broken])

    with pytest.raises(MetadataFileError) as raised:
        load_mcp_file(path)

    assert raised.value.entry_index == 1
    assert expected in raised.value.reason


def test_inapplicable_entries_are_skipped_and_reported(tmp_path: Path) -> None:
    entries = [
        STATUS_MCP,
        {**STATUS_MCP, "changeType": "DELETE"},
        {**STATUS_MCP, "aspectName": "aspectFromTheFuture", "aspect": {"json": {"x": 1}}},
        {**STATUS_MCP, "aspect": {"value": "[]", "contentType": "application/json-patch+json"}},
    ]

    loaded = load_mcp_file(_write(tmp_path, entries))

    assert [r.aspect_name for r in loaded.records] == ["status"]
    assert [s.entry_index for s in loaded.skipped] == [1, 2, 3]
    assert "DELETE" in loaded.skipped[0].reason
    assert "aspectFromTheFuture" in loaded.skipped[1].reason


def test_unknown_record_fields_are_dropped_with_a_warning(tmp_path: Path) -> None:
    entry = {**STATUS_MCP, "aspect": {"json": {"removed": True, "fieldFromTheFuture": 3}}}

    loaded = load_mcp_file(_write(tmp_path, [entry]))

    assert loaded.records[0].aspect.removed is True
    assert len(loaded.warnings) == 1
    assert "fieldFromTheFuture" in loaded.warnings[0] and "entry 0" in loaded.warnings[0]


def test_missing_file_is_a_metadata_file_error(tmp_path: Path) -> None:
    with pytest.raises(MetadataFileError, match="cannot read"):
        load_mcp_file(tmp_path / "absent.json")
