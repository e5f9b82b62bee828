"""The one error every MCL decode step raises for bad input, with a machine-readable reason."""

from __future__ import annotations

from typing import Literal

DecodeFailure = Literal[
    "too_short",  # fewer bytes than the Confluent header
    "bad_magic",  # first byte is not 0x00
    "unknown_schema_id",  # the registry (or resolver) does not know the writer schema id
    "invalid_writer_schema",  # the registry answered with something that is not an Avro schema
    "corrupt_avro",  # the Avro body does not decode with the writer schema (truncated, garbage)
    "trailing_bytes",  # the Avro body decoded but bytes were left over
    "not_json",  # a JSON-encoded MCL is not valid JSON (or not an object)
    "non_finite_number",  # NaN / Infinity in JSON, which Python's json would accept
    "bad_envelope",  # the MCL record lacks a field or has a field of the wrong type
    "unknown_change_type",  # changeType is not one of DataHub's change types
    "bad_urn",  # entityUrn does not parse with the SDK's URN classes
    "urn_entity_mismatch",  # entityUrn names another entity type than entityType
    "unknown_entity_type",  # entityType is not an entity of the SDK's registry
    "missing_aspect",  # a change type that carries a value (UPSERT, ...) without aspectName or aspect
    "unknown_aspect",  # aspectName is unknown to this acryl-datahub version
    "aspect_not_of_entity",  # the registry does not list aspectName among the entity type's aspects
    "aspect_too_large",  # an aspect value beyond the central policy's mcl_intake.max_aspect_bytes
    "invalid_utf8",  # the aspect value bytes are not UTF-8
    "unsupported_content_type",  # a relevant aspect that is not application/json
    "bad_aspect_json",  # the aspect value is not a JSON object
    "bad_aspect",  # the aspect JSON does not decode into the SDK's aspect class faithfully
]


class MclDecodeError(Exception):
    """Bad input: the event goes to the dead-letter topic with ``reason`` and ``detail``; never retried."""

    def __init__(self, reason: DecodeFailure, detail: str) -> None:
        self.reason: DecodeFailure = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}")


def short_repr(value: object, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters (an URN or a field can be huge)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_exception(error: BaseException, limit: int = 300) -> str:
    """``TypeName: message``, cut to ``limit`` characters (messages can echo large inputs)."""
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= limit else text[: limit - 3] + "..."
