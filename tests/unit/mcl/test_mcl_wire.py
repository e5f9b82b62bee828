"""Confluent-framed Avro MCLs: real fastavro encoding with the SDK's shipped schema, and bad bytes."""

from __future__ import annotations

import random

import pytest
from datahub.metadata.schema_classes import (
    MetadataChangeLogClass,
    OwnerClass,
    OwnershipClass,
    OwnershipTypeClass,
    SchemaMetadataClass,
)

from libs.datahub.mcl.avro_schema import shipped_mcl_schema
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.schema_registry import ShippedSchemaResolver, UnknownSchemaId
from libs.datahub.mcl.wire import decode_confluent, encode_confluent, schema_id_of
from tests.unit.mcl.mcl_test_inputs import SCHEMA_ID, Churn, avro_message, churn_mirror, mcl_record

OWNERSHIP = OwnershipClass(owners=[OwnerClass(owner="urn:li:corpuser:dana", type=OwnershipTypeClass.DATAOWNER)])


class _NoSchemas:
    def resolve(self, schema_id: int) -> dict:
        raise UnknownSchemaId(schema_id)


def _reason(data: bytes, resolver: object | None = None) -> str:
    with pytest.raises(MclDecodeError) as caught:
        decode_confluent(data, resolver or ShippedSchemaResolver())
    return caught.value.reason


def test_an_mcl_written_with_the_shipped_schema_round_trips_through_confluent_framing() -> None:
    schema = churn_mirror().aspect(Churn.RAW, "schemaMetadata")
    record = mcl_record(Churn.RAW, "schemaMetadata", schema, previous=schema)

    message = avro_message(record)

    decoded = decode_confluent(message, ShippedSchemaResolver())

    assert message[0] == 0 and schema_id_of(message) == SCHEMA_ID
    unchanged = ("entityType", "entityUrn", "changeType", "aspectName", "aspect", "previousAspectValue")
    assert {key: decoded[key] for key in unchanged} == {key: record[key] for key in unchanged}
    assert decoded["systemMetadata"]["runId"] == "test-run"
    assert decoded["created"]["actor"] == "urn:li:corpuser:datahub"


def test_the_decoded_record_becomes_the_sdk_classes_it_was_built_from() -> None:
    schema = churn_mirror().aspect(Churn.RAW, "schemaMetadata")
    message = avro_message(mcl_record(Churn.RAW, "schemaMetadata", schema, run_id="ingest-42"))

    mcl = MclDecoder(ShippedSchemaResolver()).decode_avro(message)

    assert mcl is not None
    assert (mcl.entity_type, mcl.urn, mcl.change_type, mcl.aspect_name) == (
        "dataset",
        Churn.RAW,
        "UPSERT",
        "schemaMetadata",
    )
    assert isinstance(mcl.aspect, SchemaMetadataClass) and mcl.aspect == schema
    assert mcl.previous_aspect is None
    assert (mcl.run_id, mcl.created_time_millis, mcl.created_actor) == (
        "ingest-42",
        1_741_600_000_000,
        "urn:li:corpuser:datahub",
    )


def test_the_sdk_s_own_mcl_class_encodes_with_the_shipped_schema() -> None:
    sdk_mcl = MetadataChangeLogClass.from_obj(
        {
            "entityType": "dataset",
            "entityUrn": Churn.RAW,
            "changeType": "UPSERT",
            "aspectName": "ownership",
            "aspect": {"value": '{"owners": []}', "contentType": "application/json"},
        }
    )
    record = {**sdk_mcl.to_obj(), "aspect": {"value": b'{"owners": []}', "contentType": "application/json"}}

    decoded = decode_confluent(encode_confluent(19, record, shipped_mcl_schema()), ShippedSchemaResolver())

    assert decoded["aspect"] == {"value": b'{"owners": []}', "contentType": "application/json"}


def test_a_record_that_does_not_match_the_schema_is_refused_when_encoding() -> None:
    with pytest.raises(ValueError, match="does not match the writer schema"):
        encode_confluent(SCHEMA_ID, {"entityType": "dataset"}, shipped_mcl_schema())
    with pytest.raises(ValueError, match="schema id"):
        encode_confluent(-1, mcl_record(Churn.RAW, "ownership", OWNERSHIP), shipped_mcl_schema())


def test_bad_bytes_raise_a_decode_error_with_a_distinct_reason() -> None:
    message = avro_message(mcl_record(Churn.RAW, "ownership", OWNERSHIP))

    assert _reason(b"\x00\x00\x00") == "too_short"
    assert _reason(b"\x01" + message[1:]) == "bad_magic"
    assert _reason(message, _NoSchemas()) == "unknown_schema_id"
    assert _reason(message[:-7]) == "corrupt_avro"
    assert _reason(message + b"\x00garbage") == "trailing_bytes"
    assert _reason(message[:5] + b"\xff" * 12) == "corrupt_avro"


def test_mutated_messages_either_decode_or_raise_a_decode_error_never_anything_else() -> None:
    message = avro_message(mcl_record(Churn.RAW, "ownership", OWNERSHIP, previous=OWNERSHIP))
    rng = random.Random(3)
    reasons: set[str] = set()
    for _ in range(400):
        mutated = bytearray(message)
        if rng.random() < 0.5:
            mutated = mutated[: rng.randrange(len(mutated))]
        else:
            for _ in range(rng.randrange(1, 4)):
                mutated[rng.randrange(5, len(mutated))] = rng.randrange(256)
        try:
            MclDecoder(ShippedSchemaResolver()).decode_avro(bytes(mutated))
        except MclDecodeError as error:
            reasons.add(error.reason)
    assert reasons <= {
        "too_short",
        "corrupt_avro",
        "trailing_bytes",
        "bad_envelope",
        "bad_aspect_json",
        "non_finite_number",
        "unsupported_content_type",
        "unknown_change_type",
        "bad_urn",
        "urn_entity_mismatch",
        "unknown_entity_type",
        "missing_aspect",
        "unknown_aspect",
        "aspect_not_of_entity",
        "invalid_utf8",
        "bad_aspect",
    }
    assert "corrupt_avro" in reasons
