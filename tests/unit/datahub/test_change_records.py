"""MetadataChangeLog-shaped change records: GenericAspect strings and plain objects both read; a bad file is
one readable error; only the changes around the model reach its snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.change_records import ChangeRecordsError, read_change_records
from services.context.metadata_changes import with_changes

DATASET = "urn:li:dataset:(urn:li:dataPlatform:snowflake,crm.customers,PROD)"
OTHER = "urn:li:dataset:(urn:li:dataPlatform:snowflake,crm.unrelated,PROD)"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,m,PROD)"


def _schema(*fields: str) -> dict:
    return {"schemaName": "customers", "fields": [{"fieldPath": f, "nativeDataType": "NUMBER"} for f in fields]}


def _record(urn: str, previous: dict, current: dict, generic: bool) -> dict:
    def wrap(aspect: dict) -> dict:
        return {"contentType": "application/json", "value": json.dumps(aspect)} if generic else aspect

    return {
        "entityType": "dataset",
        "entityUrn": urn,
        "changeType": "UPSERT",
        "aspectName": "schemaMetadata",
        "aspect": wrap(current),
        "previousAspectValue": wrap(previous),
        "created": {"time": 1741600000000, "actor": "urn:li:corpuser:datahub"},
    }


def test_generic_aspects_and_plain_objects_read_alike(tmp_path: Path) -> None:
    path = tmp_path / "changes.json"
    records = [_record(DATASET, _schema("age"), _schema("tenure"), generic) for generic in (True, False)]
    path.write_text(json.dumps(records))
    first, second = read_change_records(path)
    assert first.current == second.current == _schema("tenure")
    assert first.previous == _schema("age")
    assert first.changed_at == "2025-03-10T09:46:40+00:00"
    assert first.actor == "urn:li:corpuser:datahub"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not a readable JSON file"),
        ('{"a": 1}', "JSON list"),
        ('[{"entityUrn": "nope", "aspectName": "x"}]', "entityUrn must be a DataHub urn"),
        (
            '[{"entityUrn": "urn:li:dataset:x", "aspectName": "x", "aspect": {"contentType": "j", "value": "{"}}]',
            "not JSON",
        ),
        # a number no event can carry on (NaN, Infinity, too large for a float): refused when read, not when sealed
        ('[{"entityUrn": "urn:li:dataset:x", "aspectName": "x", "aspect": {"rowCount": NaN}}]', "not a readable"),
        ('[{"entityUrn": "urn:li:dataset:x", "aspectName": "x", "aspect": {"rowCount": 1e999}}]', "not a readable"),
        (
            '[{"entityUrn": "urn:li:dataset:x", "aspectName": "x", '
            '"aspect": {"contentType": "j", "value": "{\\"rowCount\\": -1e400}"}}]',
            "not JSON",
        ),
    ],
)
def test_a_bad_change_file_is_one_readable_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "changes.json"
    path.write_text(content)
    with pytest.raises(ChangeRecordsError, match=message):
        read_change_records(path)


def test_only_changes_about_the_model_or_its_entities_are_attached(tmp_path: Path) -> None:
    path = tmp_path / "changes.json"
    field_urn = f"urn:li:schemaField:({DATASET},age)"
    path.write_text(
        json.dumps(
            [
                _record(DATASET, _schema("age"), _schema("tenure"), True),
                _record(OTHER, _schema("a"), _schema("b"), True),
                {**_record(DATASET, {}, {}, False), "entityUrn": field_urn, "entityType": "schemaField"},
            ]
        )
    )
    snapshot = ContextSnapshot.model_validate_json(
        json.dumps(
            {
                "model_urn": MODEL,
                "provider": "file",
                "fetched_at": "2025-03-11T00:00:00+00:00",
                "entities": [
                    {
                        "urn": DATASET,
                        "entity_type": "dataset",
                        "provenance": {
                            "provider": "file",
                            "urn": DATASET,
                            "aspect": "schemaMetadata",
                            "fetched_at": "2025-03-11T00:00:00+00:00",
                        },
                    }
                ],
            }
        )
    )
    attached = with_changes(snapshot, read_change_records(path))
    assert sorted(change.entity_urn for change in attached.changes) == sorted([DATASET, field_urn])
    assert with_changes(snapshot, []) == snapshot
