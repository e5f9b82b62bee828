"""Build MCL records from SDK aspects, in the shape the shipped Avro schema encodes (for emitters and tests).

``encode_confluent(schema_id, mcl_record(...), shipped_mcl_schema())`` gives the bytes DataHub would put on
``MetadataChangeLog_Versioned_v1``; the schema id must be the one the consumer's registry resolves to this
schema (or any id when the consumer runs without a registry).
"""

from __future__ import annotations

import json
from typing import Any

from datahub.emitter.aspect import JSON_CONTENT_TYPE
from datahub.emitter.serialization_helper import pre_json_transform
from datahub.metadata.schema_classes import ChangeTypeClass, _Aspect
from datahub.utilities.urns.urn import guess_entity_type


def mcl_record(
    urn: str,
    aspect_name: str,
    aspect: _Aspect | dict[str, Any] | None,
    previous: _Aspect | dict[str, Any] | None = None,
    *,
    change_type: str = ChangeTypeClass.UPSERT,
    run_id: str | None = None,
    created_millis: int | None = None,
    actor: str = "urn:li:corpuser:datahub",
) -> dict[str, Any]:
    """An MCL record; aspects are SDK objects or DataHub JSON (``com.linkedin.*`` union names)."""
    return {
        "entityType": guess_entity_type(urn),
        "entityUrn": urn,
        "changeType": change_type,
        "aspectName": aspect_name,
        "aspect": generic_aspect(aspect),
        "previousAspectValue": generic_aspect(previous),
        "systemMetadata": None if run_id is None else {"lastObserved": created_millis or 0, "runId": run_id},
        "created": None if created_millis is None else {"time": created_millis, "actor": actor},
    }


def generic_aspect(aspect: _Aspect | dict[str, Any] | None) -> dict[str, Any] | None:
    """A GenericAspect: the aspect's JSON as bytes, content type application/json."""
    if aspect is None:
        return None
    payload = aspect if isinstance(aspect, dict) else pre_json_transform(aspect.to_obj())
    return {"value": json.dumps(payload, separators=(",", ":")).encode(), "contentType": JSON_CONTENT_TYPE}
