"""Bytes or record -> :class:`DecodedMcl`: every event validated first, then the prefilter.

Order per event: framing + Avro (or JSON) decode; the envelope (change type, the entityUrn parsed with the
SDK's URN classes and of the entityType's type, the entity type and the aspect known to the SDK's entity
registry, an aspect present where the change type carries one); each aspect value's size (the central
policy's limit), content type, UTF-8 and strict JSON (no NaN/Infinity). Only then the prefilter: events
the mirror does not keep stop here, valid but never converted to SDK classes. A kept event's aspect is
validated against its SDK class before it is returned, so nothing unvalidated reaches the mirror: first by
:func:`~libs.datahub.mcl.aspect_shape.fits_schema` (a walk of the JSON against the class's own Avro schema,
which only ever says "certainly valid" or "not certain"), and when that is not certain by the SDK route itself
(``from_obj`` + ``validate()`` + a fidelity check), which accepts, caching the typed value on the event, or
refuses with ``bad_aspect``. Typed SDK objects are otherwise built only when a reader asks for one (risk
detection, when a model is downstream).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from datahub.emitter.aspect import ASPECT_MAP, JSON_CONTENT_TYPE
from datahub.metadata.schema_classes import ChangeTypeClass

from libs.datahub.mcl.aspect_decode import decode_aspect
from libs.datahub.mcl.aspect_shape import fits_schema
from libs.datahub.mcl.decode_error import MclDecodeError, short_repr
from libs.datahub.mcl.entity_registry import aspects_of
from libs.datahub.mcl.events import AspectDecoder, DecodedMcl
from libs.datahub.mcl.intake_limits import MclIntakeLimits, central_mcl_limits
from libs.datahub.mcl.json_mcl import decode_json_mcl
from libs.datahub.mcl.prefilter import ALL_CHANGE_TYPES, MclPrefilter
from libs.datahub.mcl.schema_registry import SchemaResolver
from libs.datahub.mcl.strict_json import parse_strict_json
from libs.datahub.mcl.urn_check import checked_urn
from libs.datahub.mcl.wire import decode_confluent


@dataclass
class DecodeCounts:
    kept: int = 0
    skipped: int = 0


class MclDecoder:
    """Decodes MCLs for the mirror; ``counts`` says how many were kept and how many the prefilter skipped.

    ``limits`` defaults to the central policy's ``mcl_intake`` section.
    """

    def __init__(
        self,
        resolver: SchemaResolver,
        prefilter: MclPrefilter | None = None,
        aspect_decoder: AspectDecoder = decode_aspect,
        limits: MclIntakeLimits | None = None,
    ) -> None:
        self._resolver = resolver
        self._prefilter = prefilter or MclPrefilter.for_mirror()
        self._aspect_decoder = aspect_decoder
        self.limits = limits or central_mcl_limits()
        self.counts = DecodeCounts()

    def decode_avro(self, data: bytes) -> DecodedMcl | None:
        """A Confluent-framed Avro MCL; None when the prefilter drops it. Raises MclDecodeError."""
        return self.from_record(decode_confluent(data, self._resolver))

    def decode_json(self, data: bytes | str) -> DecodedMcl | None:
        """A JSON-encoded MCL; None when the prefilter drops it. Raises MclDecodeError."""
        return self.from_record(decode_json_mcl(data))

    def from_record(self, record: Mapping[str, Any]) -> DecodedMcl | None:
        entity_type, change_type, aspect_name = _envelope_names(record)
        urn = checked_urn(record.get("entityUrn"), entity_type)
        entity_aspects = aspects_of(entity_type)
        if entity_aspects is None:
            raise MclDecodeError("unknown_entity_type", f"entityType {short_repr(entity_type)} is not a DataHub entity")
        if aspect_name is None:
            raise MclDecodeError("missing_aspect", f"a {change_type} of {urn} without aspectName")
        if aspect_name not in ASPECT_MAP:
            raise MclDecodeError("unknown_aspect", f"aspect {short_repr(aspect_name)} is unknown to this acryl-datahub")
        if aspect_name not in entity_aspects:
            raise MclDecodeError("aspect_not_of_entity", f"aspect {aspect_name} is not an aspect of {entity_type}")
        what = f"aspect {aspect_name} of {urn}"
        generic = record.get("aspect")
        if generic is None and change_type != ChangeTypeClass.DELETE:
            raise MclDecodeError("missing_aspect", f"a {change_type} of {what} without a value")
        aspect_text, aspect_json = self._aspect_payload(generic, what)
        previous = record.get("previousAspectValue")
        previous_text: str | None
        previous_json: dict[str, Any] | None
        if previous is not None and previous == generic and aspect_text is not None:
            previous_text, previous_json = aspect_text, aspect_json  # unchanged: the same bytes, checked once
        else:
            previous_text, previous_json = self._aspect_payload(previous, f"previous {what}")
        if not self._prefilter.keeps(entity_type, aspect_name, change_type):
            self.counts.skipped += 1
            return None
        created_time, created_actor = _audit_stamp(record.get("created"))
        run_id, version = _system_metadata(record.get("systemMetadata"))
        mcl = DecodedMcl(
            entity_type=entity_type,
            urn=urn,
            change_type=change_type,
            aspect_name=aspect_name,
            aspect_json=aspect_json,
            previous_aspect_json=previous_json,
            created_time_millis=created_time,
            created_actor=created_actor,
            run_id=run_id,
            aspect_text=aspect_text,
            aspect_version=version,
            previous_aspect_text=previous_text,
            decode_typed=self._aspect_decoder,
        )
        if aspect_json is not None and not fits_schema(aspect_name, aspect_json):
            _ = mcl.typed_aspect  # not certain: the SDK class decides (raises bad_aspect); cached for readers
        self.counts.kept += 1
        return mcl

    def _aspect_payload(self, generic: Any, what: str) -> tuple[str | None, dict[str, Any] | None]:
        """A GenericAspect ``{"value", "contentType"}`` (or ``{"json": {...}}``) -> (JSON text, parsed object)."""
        if generic is None:
            return None, None
        if not isinstance(generic, dict):
            raise MclDecodeError("bad_envelope", f"{what} must be an object, found {type(generic).__name__}")
        limit = self.limits.max_aspect_bytes
        if "json" in generic:
            parsed = generic["json"]
            text = None
            size = len(json.dumps(parsed, separators=(",", ":"), allow_nan=True)) if isinstance(parsed, dict) else 0
        else:
            content_type = generic.get("contentType")
            if content_type != JSON_CONTENT_TYPE:
                raise MclDecodeError("unsupported_content_type", f"{what} has contentType {short_repr(content_type)}")
            value = generic.get("value")
            if not isinstance(value, bytes | str):
                raise MclDecodeError("bad_envelope", f"{what} value must be bytes or a string")
            size = len(value)
            if size > limit:
                raise MclDecodeError("aspect_too_large", f"{what} is {size} bytes, the limit is {limit}")
            if isinstance(value, bytes):
                try:
                    value = value.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise MclDecodeError("invalid_utf8", f"{what} is not UTF-8 (byte {error.start})") from None
            parsed = parse_strict_json(value, "bad_aspect_json", what)
            text = value
        if size > limit:
            raise MclDecodeError("aspect_too_large", f"{what} is {size} bytes, the limit is {limit}")
        if not isinstance(parsed, dict):
            raise MclDecodeError("bad_aspect_json", f"{what} must be a JSON object, found {type(parsed).__name__}")
        return text, parsed


def _envelope_names(record: Mapping[str, Any]) -> tuple[str, str, str | None]:
    entity_type = record.get("entityType")
    change_type = record.get("changeType")
    aspect_name = record.get("aspectName")
    if not isinstance(entity_type, str) or not entity_type:
        raise MclDecodeError("bad_envelope", "entityType must be a non-empty string")
    if not isinstance(change_type, str):
        raise MclDecodeError("bad_envelope", "changeType must be a string")
    if change_type not in ALL_CHANGE_TYPES:
        detail = f"changeType {short_repr(change_type)} is not a DataHub change type"
        raise MclDecodeError("unknown_change_type", detail)
    if aspect_name is not None and not isinstance(aspect_name, str):
        raise MclDecodeError("bad_envelope", "aspectName must be a string or null")
    return entity_type, change_type, aspect_name


def _audit_stamp(created: Any) -> tuple[int | None, str | None]:
    if not isinstance(created, dict):
        return None, None
    time, actor = created.get("time"), created.get("actor")
    return (
        time if isinstance(time, int) and not isinstance(time, bool) else None,
        actor if isinstance(actor, str) else None,
    )


def _system_metadata(system_metadata: Any) -> tuple[str | None, str | None]:
    """(runId, version) of the MCL's systemMetadata, each None when absent or not a string."""
    if not isinstance(system_metadata, dict):
        return None, None
    run_id, version = system_metadata.get("runId"), system_metadata.get("version")
    return (run_id if isinstance(run_id, str) else None, version if isinstance(version, str) else None)
