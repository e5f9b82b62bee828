"""Aspect JSON (DataHub's form, ``com.linkedin.*`` union names) -> the SDK's typed aspect class, safely.

The route is the one :mod:`libs.datahub.mcp_file` takes for MCP files: ``post_json_transform`` before
``AspectClass.from_obj`` (else union members silently decode as the wrong class), ``validate()``, then
:func:`libs.datahub.decode_fidelity.decode_mismatches` between the input and the re-encoded object,
because ``from_obj`` silently turns an unknown union member into another member and drops unknown
fields. A wrong union member or changed value is an error; a dropped unknown field (a newer server's
addition) is a warning.

``mcp_file`` keeps its version of these steps private (``_check_fidelity``), so they are composed here
from the same public pieces; exporting one ``decode_aspect_json`` there would let both share one route.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from datahub.emitter.aspect import ASPECT_MAP
from datahub.emitter.serialization_helper import post_json_transform, pre_json_transform
from datahub.metadata.schema_classes import _Aspect

from libs.datahub.decode_fidelity import decode_mismatches
from libs.datahub.mcl.decode_error import MclDecodeError, describe_exception


@dataclass(frozen=True)
class TypedAspect:
    value: _Aspect
    warnings: tuple[str, ...] = ()


def decode_aspect(aspect_name: str, aspect_json: dict[str, Any]) -> TypedAspect:
    """Raises MclDecodeError(``bad_aspect``) when the JSON does not decode faithfully into the aspect class."""
    aspect_class = ASPECT_MAP.get(aspect_name)
    if aspect_class is None:
        raise MclDecodeError("bad_aspect", f"aspect {aspect_name!r} is unknown to this acryl-datahub version")
    what = f"aspect {aspect_name}"
    try:
        aspect = aspect_class.from_obj(post_json_transform(aspect_json))
        valid = aspect.validate()
        decoded = pre_json_transform(aspect.to_obj())
    except Exception as error:  # avrogen raises anything from KeyError to AvroTypeException on bad input
        raise MclDecodeError("bad_aspect", f"{what} does not decode: {describe_exception(error)}") from None
    if not valid:
        raise MclDecodeError("bad_aspect", f"{what} does not match the {aspect_class.__name__} schema")
    mismatches = decode_mismatches(aspect_json, decoded)
    errors = [mismatch for mismatch in mismatches if mismatch.kind != "unknown-field"]
    if errors:
        raise MclDecodeError("bad_aspect", f"{what} decodes wrongly: {errors[0].describe()}")
    return TypedAspect(aspect, tuple(f"{what}: {mismatch.describe()}" for mismatch in mismatches))
