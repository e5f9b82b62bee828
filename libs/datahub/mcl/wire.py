"""Confluent wire format for MCLs: ``0x00``, a 4-byte big-endian schema id, then Avro binary (no container).

Decoding trusts nothing: every way a byte string can fail (too short, wrong magic byte, an id the
resolver does not know, Avro that is truncated or corrupt, bytes left over) raises one
:class:`MclDecodeError` with a distinct reason. :class:`SchemaRegistryUnavailable` is not a decode error
and propagates (retry, do not dead-letter).
"""

from __future__ import annotations

import io
from typing import Any

import fastavro
from fastavro.validation import ValidationError

from libs.datahub.mcl.avro_schema import ParsedSchema
from libs.datahub.mcl.compiled_reader import COMPILED_READERS, CompiledReaders
from libs.datahub.mcl.decode_error import MclDecodeError, describe_exception
from libs.datahub.mcl.schema_registry import InvalidRegisteredSchema, SchemaResolver, UnknownSchemaId

MAGIC_BYTE = 0
HEADER_SIZE = 5
MAX_SCHEMA_ID = 2**31 - 1

# What fastavro's reader can raise on truncated or corrupt input. Fuzzing MCLs written with the shipped
# schema gives EOFError (short read), IndexError (union index or enum symbol out of range) and
# UnicodeDecodeError; the others guard absurd lengths and recursive writer schemas from a registry.
_AVRO_READ_ERRORS = (
    EOFError,
    IndexError,
    KeyError,
    ValueError,
    TypeError,
    RecursionError,
    OverflowError,
    UnicodeDecodeError,
    MemoryError,
    AssertionError,
)


def encode_confluent(schema_id: int, record: dict[str, Any], parsed_schema: ParsedSchema) -> bytes:
    """Frame ``record`` (validated against ``parsed_schema``) as Confluent Avro; raises ValueError if invalid."""
    if not 0 <= schema_id <= MAX_SCHEMA_ID:
        raise ValueError(f"schema id must be in 0..{MAX_SCHEMA_ID}, got {schema_id}")
    buffer = io.BytesIO()
    buffer.write(bytes((MAGIC_BYTE,)))
    buffer.write(schema_id.to_bytes(4, "big"))
    try:
        fastavro.schemaless_writer(buffer, parsed_schema, record)
    except (ValidationError, ValueError, TypeError, KeyError, AttributeError) as error:
        raise ValueError(f"the record does not match the writer schema: {describe_exception(error)}") from None
    return buffer.getvalue()


def schema_id_of(data: bytes) -> int:
    """The schema id in a Confluent header; raises MclDecodeError when there is no valid header."""
    if len(data) < HEADER_SIZE:
        raise MclDecodeError("too_short", f"{len(data)} bytes, a Confluent header needs {HEADER_SIZE}")
    if data[0] != MAGIC_BYTE:
        raise MclDecodeError("bad_magic", f"first byte is 0x{data[0]:02x}, expected 0x00")
    return int.from_bytes(data[1:HEADER_SIZE], "big")


def decode_confluent(
    data: bytes, resolver: SchemaResolver, readers: CompiledReaders | None = COMPILED_READERS
) -> dict[str, Any]:
    """Decode one Confluent-framed Avro message with the writer schema its id names. `readers`: the compiled
    readers tried first (None: fastavro alone), whose every refusal fastavro decides and words."""
    schema_id = schema_id_of(data)
    try:
        writer_schema = resolver.resolve(schema_id)
    except UnknownSchemaId as error:
        raise MclDecodeError("unknown_schema_id", str(error)) from None
    except InvalidRegisteredSchema as error:
        raise MclDecodeError("invalid_writer_schema", str(error)) from None
    if readers is not None and (compiled_read := readers.read(writer_schema, data, HEADER_SIZE)) is not None:
        return compiled_read
    body = io.BytesIO(data)
    body.seek(HEADER_SIZE)
    try:
        record = fastavro.schemaless_reader(body, writer_schema, None)
    except _AVRO_READ_ERRORS as error:
        raise MclDecodeError("corrupt_avro", f"schema id {schema_id}: {describe_exception(error)}") from None
    left_over = len(data) - body.tell()
    if left_over:
        raise MclDecodeError("trailing_bytes", f"{left_over} bytes after the Avro record (schema id {schema_id})")
    if not isinstance(record, dict):
        raise MclDecodeError("bad_envelope", f"schema id {schema_id} does not describe a record")
    return record
