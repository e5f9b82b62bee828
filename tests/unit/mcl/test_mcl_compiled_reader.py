"""The compiled Avro reader (cavro) in front of fastavro: it may only ever say what fastavro says.

Every message here is decoded twice, once through :func:`decode_confluent` as the intake runs it (the compiled
reader first) and once with fastavro alone; the record, or the decode error's reason and detail, must be the same.
The messages are good MCLs of many shapes and the ways a hostile or broken producer spoils them: flipped bytes,
cut ends, bytes appended, varints made long or negative, union and enum indexes out of range, invalid UTF-8.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import fastavro
import pytest

from libs.datahub.mcl.avro_schema import ParsedSchema, shipped_mcl_schema, shipped_mcl_schema_json
from libs.datahub.mcl.compiled_reader import CompiledReaders
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.schema_registry import ShippedSchemaResolver
from libs.datahub.mcl.wire import decode_confluent, encode_confluent
from tests.support.mcl_poison import good_records, poison_cases

SCHEMA_ID = 18


class _OneSchema:
    def __init__(self, parsed: ParsedSchema) -> None:
        self.parsed = parsed

    def resolve(self, schema_id: int) -> ParsedSchema:
        return self.parsed


def _parsed(schema: dict[str, Any]) -> ParsedSchema:
    parsed = fastavro.parse_schema(schema)
    assert isinstance(parsed, dict)
    return parsed


def _outcome(data: bytes, resolver: Any, readers: CompiledReaders | None) -> tuple[str, Any]:
    try:
        return "record", decode_confluent(data, resolver, readers)
    except MclDecodeError as error:
        return "error", (error.reason, error.detail)


def _both(data: bytes, resolver: Any, readers: CompiledReaders) -> tuple[tuple[str, Any], tuple[str, Any]]:
    return _outcome(data, resolver, readers), _outcome(data, resolver, None)


def _record(rng: random.Random, index: int) -> dict[str, Any]:
    """An MCL the shipped schema encodes, with the optional parts present or not at random."""
    aspect = {"owners": [{"owner": f"urn:li:corpuser:u{index}", "type": "DATAOWNER"}]}
    text = json.dumps(aspect, ensure_ascii=rng.random() < 0.5).encode()
    record: dict[str, Any] = {
        "auditHeader": None,
        "entityType": "dataset",
        "entityUrn": f"urn:li:dataset:(urn:li:dataPlatform:hive,db.t{index}_ü,PROD)",
        "entityKeyAspect": None,
        "changeType": rng.choice(["UPSERT", "CREATE", "DELETE", "PATCH", "RESTATE"]),
        "aspectName": rng.choice(["ownership", "status", "datasetProperties", None]),
        "aspect": {"value": text, "contentType": "application/json"} if rng.random() < 0.9 else None,
        "systemMetadata": None,
        "previousAspectValue": None,
        "previousSystemMetadata": None,
        "created": {"time": rng.randrange(2**41), "actor": "urn:li:corpuser:ingestion", "impersonator": None},
    }
    if rng.random() < 0.7:
        record["systemMetadata"] = {
            "lastObserved": rng.randrange(2**41),
            "runId": f"run-{index}",
            "properties": {f"k{i}": "v" * i for i in range(rng.randrange(4))} or None,
            "version": str(rng.randrange(9)),
        }
    if rng.random() < 0.3:
        record["previousAspectValue"] = {"value": b"{}", "contentType": "application/json"}
    return record


def _messages(count: int, seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    schema = shipped_mcl_schema()
    for index in range(count):
        yield encode_confluent(SCHEMA_ID, _record(rng, index), schema)


def _spoiled(message: bytes, rng: random.Random) -> bytes:
    """One way of spoiling a message, chosen at random."""
    body = bytearray(message)
    way = rng.randrange(7)
    if way == 0:  # flipped bytes
        for _ in range(rng.randrange(1, 4)):
            body[rng.randrange(5, len(body))] = rng.randrange(256)
    elif way == 1:  # cut short
        body = body[: rng.randrange(5, len(body))]
    elif way == 2:  # bytes appended
        body += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 24)))
    elif way == 3:  # a long varint: continuation bits on a run of bytes
        at = rng.randrange(5, len(body))
        body[at:at] = b"\x80" * rng.randrange(1, 12)
    elif way == 4:  # a negative length or index (zigzag odd numbers are negative)
        body[rng.randrange(5, len(body))] = rng.choice([0x01, 0x03, 0x7F, 0xFF])
    elif way == 5:  # an invalid UTF-8 sequence, a lone surrogate or an overlong encoding
        at = rng.randrange(5, len(body))
        body[at : at + 3] = rng.choice([b"\xff\xfe\xfd", b"\xed\xa0\x80", b"\xc0\xaf\x41"])
    else:  # bytes inserted in the middle
        at = rng.randrange(5, len(body))
        body[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6)))
    return bytes(body)


def test_good_messages_of_many_shapes_decode_as_fastavro_decodes_them() -> None:
    readers, resolver = CompiledReaders(), ShippedSchemaResolver()
    messages = list(_messages(400, seed=11)) + [good.raw for good in good_records() if good.raw[:1] == b"\x00"]
    for message in messages:
        fast, reference = _both(message, resolver, readers)
        assert fast == reference
        assert fast[0] == "record"
    assert readers.compiled(shipped_mcl_schema()) is not None  # the fast path was taken, not only the fallback


def test_spoiled_messages_get_fastavro_s_verdict_word_for_word() -> None:
    readers, resolver = CompiledReaders(), ShippedSchemaResolver()
    rng = random.Random(5)
    originals = list(_messages(60, seed=3))
    verdicts: set[str] = set()
    for _ in range(3_000):
        spoiled = _spoiled(rng.choice(originals), rng)
        fast, reference = _both(spoiled, resolver, readers)
        assert fast == reference, spoiled.hex()
        verdicts.add(fast[1][0] if fast[0] == "error" else "record")
    assert {"corrupt_avro", "trailing_bytes", "record"} <= verdicts


def test_the_poison_corpus_gets_the_same_verdicts() -> None:
    readers, resolver = CompiledReaders(), ShippedSchemaResolver()
    for case in poison_cases():
        if case.raw[:1] == b"{":
            continue
        fast, reference = _both(case.raw, resolver, readers)
        assert fast == reference, case.name


@pytest.mark.parametrize("extra", [1, 2, 15, 16, 17, 40])
def test_bytes_after_the_record_are_refused_with_their_count(extra: int) -> None:
    message = next(_messages(1, seed=1))
    readers = CompiledReaders()
    for tail in (b"\x00" * extra, bytes(range(extra)), bytes([0x20]) + b"\x00" * (extra - 1)):
        with pytest.raises(MclDecodeError) as caught:
            decode_confluent(message + tail, ShippedSchemaResolver(), readers)
        assert caught.value.reason == "trailing_bytes"
        assert f"{extra} bytes after the Avro record" in caught.value.detail


def test_a_recursive_schema_or_one_with_logical_types_is_read_by_fastavro_alone() -> None:
    recursive = _parsed(
        {
            "type": "record",
            "name": "Node",
            "fields": [{"name": "label", "type": "string"}, {"name": "next", "type": ["null", "Node"]}],
        }
    )
    stamped = _parsed(
        {
            "type": "record",
            "name": "Stamped",
            "fields": [{"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}}],
        }
    )
    readers = CompiledReaders()
    assert readers.compiled(recursive) is None
    assert readers.compiled(stamped) is None
    deep = {"label": "a", "next": {"label": "b", "next": None}}
    message = encode_confluent(7, deep, recursive)
    assert decode_confluent(message, _OneSchema(recursive), readers) == deep


def test_a_schema_that_names_the_reader_s_own_frame_is_read_by_fastavro_alone() -> None:
    shipped = json.loads(shipped_mcl_schema_json())
    readers = CompiledReaders()
    clash = _parsed(
        {
            "type": "record",
            "name": readers.frame_name,
            "fields": [{"name": "mcl", "type": shipped}],
        }
    )
    assert readers.compiled(clash) is None
    record = {"mcl": _record(random.Random(2), 1)}
    message = encode_confluent(9, record, clash)
    assert _outcome(message, _OneSchema(clash), readers) == _outcome(message, _OneSchema(clash), None)


def test_each_schema_is_compiled_once_and_the_store_is_bounded() -> None:
    readers = CompiledReaders(limit=3)
    schemas = [
        _parsed({"type": "record", "name": f"R{i}", "fields": [{"name": "n", "type": "long"}]}) for i in range(5)
    ]
    first = readers.compiled(schemas[0])
    assert first is not None and readers.compiled(schemas[0]) is first
    for schema in schemas:
        readers.compiled(schema)
    assert len(readers) <= 3
    for number, schema in enumerate(schemas):
        message = encode_confluent(1, {"n": number}, schema)
        assert decode_confluent(message, _OneSchema(schema), readers) == {"n": number}
