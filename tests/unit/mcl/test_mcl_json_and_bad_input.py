"""JSON-encoded MCLs decode like Avro ones; bad JSON, NaN and bad aspects raise distinct decode errors."""

from __future__ import annotations

import json

import pytest
from datahub.metadata.schema_classes import (
    MetadataChangeLogClass,
    OwnerClass,
    OwnershipClass,
    OwnershipTypeClass,
    SchemaMetadataClass,
)

from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.schema_registry import ShippedSchemaResolver
from tests.unit.mcl.mcl_test_inputs import Churn, avro_message, churn_mirror, json_message, mcl_record

OWNERSHIP = OwnershipClass(owners=[OwnerClass(owner="urn:li:corpuser:dana", type=OwnershipTypeClass.DATAOWNER)])


def _decoder() -> MclDecoder:
    return MclDecoder(ShippedSchemaResolver())


def _json_reason(text: str) -> str:
    with pytest.raises(MclDecodeError) as caught:
        _decoder().decode_json(text)
    return caught.value.reason


def _ownership_mcl_with_aspect_value(value: str) -> str:
    record = json.loads(json_message(mcl_record(Churn.RAW, "ownership", OWNERSHIP)))
    record["aspect"]["value"] = value
    return json.dumps(record)


def test_a_json_mcl_decodes_to_the_same_event_as_its_avro_form() -> None:
    schema = churn_mirror().aspect(Churn.RAW, "schemaMetadata")
    record = mcl_record(Churn.RAW, "schemaMetadata", schema, previous=schema)

    from_json = _decoder().decode_json(json_message(record))
    from_avro = _decoder().decode_avro(avro_message(record))

    assert from_json is not None and from_avro is not None
    assert from_json == from_avro
    assert isinstance(from_json.aspect, SchemaMetadataClass) and from_json.previous_aspect == schema


def test_the_sdk_s_json_form_of_an_mcl_and_the_mcp_file_form_of_the_aspect_decode() -> None:
    sdk_json = MetadataChangeLogClass(
        entityType="dataset",
        entityUrn=Churn.RAW,
        changeType="UPSERT",
        aspectName="ownership",
        aspect=None,
    ).to_obj()
    sdk_json["aspect"] = {"value": json.dumps(OWNERSHIP.to_obj()), "contentType": "application/json"}
    file_form = {**sdk_json, "aspect": {"json": OWNERSHIP.to_obj()}}

    for text in (json.dumps(sdk_json), json.dumps(file_form)):
        mcl = _decoder().decode_json(text)
        assert mcl is not None and mcl.aspect == OWNERSHIP


def test_bad_json_and_non_finite_numbers_have_distinct_reasons() -> None:
    assert _json_reason("{not json") == "not_json"
    assert _json_reason("[1, 2]") == "not_json"
    assert _json_reason('{"entityType": "dataset", "x": NaN}') == "non_finite_number"
    assert _json_reason(_ownership_mcl_with_aspect_value('{"owners": [')) == "bad_aspect_json"
    assert _json_reason(_ownership_mcl_with_aspect_value('{"owners": [], "x": Infinity}')) == "non_finite_number"
    # too large for a float: read as infinity, which no event could carry on
    assert _json_reason(_ownership_mcl_with_aspect_value('{"owners": [], "x": 1e999}')) == "non_finite_number"
    assert _json_reason('{"entityType": "dataset", "x": -1e400}') == "non_finite_number"
    assert _json_reason(_ownership_mcl_with_aspect_value("[]")) == "bad_aspect_json"


def test_an_avro_mcl_whose_aspect_holds_nan_is_refused() -> None:
    record = mcl_record(Churn.RAW, "ownership", OWNERSHIP)
    record["aspect"]["value"] = b'{"owners": [], "lastModified": {"time": NaN}}'

    with pytest.raises(MclDecodeError) as caught:
        _decoder().decode_avro(avro_message(record))
    assert caught.value.reason == "non_finite_number"


def test_envelope_and_content_type_problems_are_reported() -> None:
    record = json.loads(json_message(mcl_record(Churn.RAW, "ownership", OWNERSHIP)))
    assert _json_reason(json.dumps({**record, "entityType": None})) == "bad_envelope"
    assert _json_reason(json.dumps({**record, "aspectName": ["ownership"]})) == "bad_envelope"
    assert _json_reason(json.dumps({**record, "entityUrn": "dataset-1"})) == "bad_urn"
    protobuf = {**record, "aspect": {"value": "...", "contentType": "application/x-protobuf"}}
    assert _json_reason(json.dumps(protobuf)) == "unsupported_content_type"


def test_a_kept_aspect_that_does_not_fit_its_sdk_class_is_refused_when_decoded() -> None:
    schema_json = json.loads(
        json_message(mcl_record(Churn.RAW, "schemaMetadata", churn_mirror().aspect(Churn.RAW, "schemaMetadata")))
    )
    aspect = json.loads(schema_json["aspect"]["value"])
    aspect["fields"][0]["type"]["type"] = {"com.linkedin.schema.NoSuchType": {}}
    schema_json["aspect"]["value"] = json.dumps(aspect)

    with pytest.raises(MclDecodeError) as caught:
        _decoder().decode_json(json.dumps(schema_json))
    assert caught.value.reason == "bad_aspect"
    assert "NoSuchType" in caught.value.detail
