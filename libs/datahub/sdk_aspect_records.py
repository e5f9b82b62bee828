"""Decode one aspect as DataHub serves it (REST/OpenAPI JSON) into an :class:`AspectRecord`.

GMS answers with Rest.li JSON: union members are named by their full class name
(``com.linkedin.schema.NumberType``). The SDK's ``post_json_transform`` maps them onto the Avro names
before ``AspectClass.from_obj`` (the order DataHub's own ``get_entity_as_mcps`` uses), then the aspect is
validated and checked for fidelity (:mod:`libs.datahub.decode_fidelity`), as the file provider does.
"""

from __future__ import annotations

from typing import Any

from datahub.emitter.aspect import ASPECT_MAP
from datahub.emitter.serialization_helper import post_json_transform, pre_json_transform
from datahub.metadata.schema_classes import KEY_ASPECTS
from datahub.utilities.urns.urn import guess_entity_type

from libs.datahub.decode_fidelity import decode_mismatches
from libs.datahub.mcp_file import AspectRecord
from libs.datahub.sdk_errors import describe_error

KEY_ASPECT_NAMES = frozenset(key_class.ASPECT_NAME for key_class in KEY_ASPECTS.values())


class AspectDecodeError(Exception):
    """An aspect served by DataHub does not decode into the SDK's class."""


def is_known_aspect(aspect_name: str) -> bool:
    return aspect_name in ASPECT_MAP


def decode_aspect(urn: str, aspect_name: str, restli_json: object, location: str) -> AspectRecord:
    """Typed record of one aspect value; raises AspectDecodeError naming the urn and aspect."""
    aspect_class = ASPECT_MAP.get(aspect_name)
    what = f"aspect {aspect_name} of {urn}"
    if aspect_class is None:
        raise AspectDecodeError(f"{what}: unknown to this acryl-datahub version")
    if not isinstance(restli_json, dict):
        raise AspectDecodeError(f"{what}: expected a JSON object, found {type(restli_json).__name__}")
    try:
        aspect = aspect_class.from_obj(post_json_transform(restli_json))
        valid = aspect.validate()
        decoded = pre_json_transform(aspect.to_obj())
    except Exception as error:
        raise AspectDecodeError(f"{what} does not decode: {describe_error(error)}") from None
    if not valid:
        raise AspectDecodeError(f"{what} does not match the {aspect_class.__name__} schema")
    wrong = [m for m in decode_mismatches(restli_json, decoded) if m.kind != "unknown-field"]
    if wrong:
        raise AspectDecodeError(f"{what} decodes wrongly: {wrong[0].describe()}")
    return AspectRecord(guess_entity_type(urn), urn, aspect_name, aspect, location, 0)


def restli_json_of(record: AspectRecord) -> dict[str, Any]:
    """The aspect value as GMS serves it (Rest.li union member names)."""
    restli_json: dict[str, Any] = pre_json_transform(record.aspect.to_obj())  # untyped in the SDK: dict in, dict out
    return restli_json
