"""Bytes or record -> :class:`DecodedMcl`, with the prefilter before any aspect parsing.

Order per event: framing + Avro (or JSON) decode; the envelope's entityType/aspectName/changeType types;
the prefilter (irrelevant events stop here, their aspect bytes untouched); then the envelope's remaining
fields and a strict parse of the aspect JSON. The typed SDK conversion is left to whoever reads
:attr:`DecodedMcl.aspect` (see :mod:`libs.datahub.mcl.events`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from datahub.emitter.aspect import JSON_CONTENT_TYPE

from libs.datahub.mcl.aspect_decode import decode_aspect
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.events import AspectDecoder, DecodedMcl
from libs.datahub.mcl.json_mcl import decode_json_mcl
from libs.datahub.mcl.prefilter import MclPrefilter
from libs.datahub.mcl.schema_registry import SchemaResolver
from libs.datahub.mcl.strict_json import parse_strict_json
from libs.datahub.mcl.wire import decode_confluent

URN_PREFIX = "urn:li:"


@dataclass
class DecodeCounts:
    kept: int = 0
    skipped: int = 0


class MclDecoder:
    """Decodes MCLs for the mirror; ``counts`` says how many were kept and how many the prefilter skipped."""

    def __init__(
        self,
        resolver: SchemaResolver,
        prefilter: MclPrefilter | None = None,
        aspect_decoder: AspectDecoder = decode_aspect,
    ) -> None:
        self._resolver = resolver
        self._prefilter = prefilter or MclPrefilter.for_mirror()
        self._aspect_decoder = aspect_decoder
        self.counts = DecodeCounts()

    def decode_avro(self, data: bytes) -> DecodedMcl | None:
        """A Confluent-framed Avro MCL; None when the prefilter drops it. Raises MclDecodeError."""
        return self.from_record(decode_confluent(data, self._resolver))

    def decode_json(self, data: bytes | str) -> DecodedMcl | None:
        """A JSON-encoded MCL; None when the prefilter drops it. Raises MclDecodeError."""
        return self.from_record(decode_json_mcl(data))

    def from_record(self, record: Mapping[str, Any]) -> DecodedMcl | None:
        entity_type = record.get("entityType")
        aspect_name = record.get("aspectName")
        change_type = record.get("changeType")
        if not isinstance(entity_type, str) or not entity_type:
            raise MclDecodeError("bad_envelope", "entityType must be a non-empty string")
        if not isinstance(change_type, str):
            raise MclDecodeError("bad_envelope", "changeType must be a string")
        if aspect_name is not None and not isinstance(aspect_name, str):
            raise MclDecodeError("bad_envelope", "aspectName must be a string or null")
        if not self._prefilter.keeps(entity_type, aspect_name, change_type):
            self.counts.skipped += 1
            return None
        urn = record.get("entityUrn")
        if not isinstance(urn, str) or not urn.startswith(URN_PREFIX):
            raise MclDecodeError("bad_envelope", f"entityUrn is not a DataHub urn: {_short(urn)}")
        what = f"aspect {aspect_name} of {urn}"
        aspect_text, aspect_json = _aspect_payload(record.get("aspect"), what)
        _, previous_json = _aspect_payload(record.get("previousAspectValue"), f"previous {what}")
        created_time, created_actor = _audit_stamp(record.get("created"))
        self.counts.kept += 1
        return DecodedMcl(
            entity_type=entity_type,
            urn=urn,
            change_type=change_type,
            aspect_name=aspect_name,
            aspect_json=aspect_json,
            previous_aspect_json=previous_json,
            created_time_millis=created_time,
            created_actor=created_actor,
            run_id=_run_id(record.get("systemMetadata")),
            aspect_text=aspect_text,
            decode_typed=self._aspect_decoder,
        )


def _aspect_payload(generic: Any, what: str) -> tuple[str | None, dict[str, Any] | None]:
    """A GenericAspect ``{"value", "contentType"}`` (or ``{"json": {...}}``) -> (JSON text, parsed object)."""
    if generic is None:
        return None, None
    if not isinstance(generic, dict):
        raise MclDecodeError("bad_envelope", f"{what} must be an object, found {type(generic).__name__}")
    if "json" in generic:
        parsed = generic["json"]
        text = None
    else:
        content_type = generic.get("contentType")
        if content_type != JSON_CONTENT_TYPE:
            raise MclDecodeError("unsupported_content_type", f"{what} has contentType {_short(content_type)}")
        value = generic.get("value")
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                raise MclDecodeError("bad_aspect_json", f"{what} is not UTF-8") from None
        if not isinstance(value, str):
            raise MclDecodeError("bad_envelope", f"{what} value must be bytes or a string")
        parsed = parse_strict_json(value, "bad_aspect_json", what)
        text = value
    if not isinstance(parsed, dict):
        raise MclDecodeError("bad_aspect_json", f"{what} must be a JSON object, found {type(parsed).__name__}")
    return text, parsed


def _audit_stamp(created: Any) -> tuple[int | None, str | None]:
    if not isinstance(created, dict):
        return None, None
    time, actor = created.get("time"), created.get("actor")
    return (
        time if isinstance(time, int) and not isinstance(time, bool) else None,
        actor if isinstance(actor, str) else None,
    )


def _run_id(system_metadata: Any) -> str | None:
    if not isinstance(system_metadata, dict):
        return None
    run_id = system_metadata.get("runId")
    return run_id if isinstance(run_id, str) else None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
