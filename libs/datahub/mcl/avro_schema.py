"""The MetadataChangeLog Avro schema shipped inside acryl-datahub, parsed once for fastavro."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import fastavro

ParsedSchema = dict[str, Any]
"""A writer schema as returned by ``fastavro.parse_schema`` (named types resolved)."""

SHIPPED_MCL_SCHEMA_RESOURCE = ("datahub.metadata.schemas", "MetadataChangeLog.avsc")


@cache
def shipped_mcl_schema_json() -> str:
    """The text of ``datahub/metadata/schemas/MetadataChangeLog.avsc`` in the installed SDK."""
    package, name = SHIPPED_MCL_SCHEMA_RESOURCE
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


@cache
def shipped_mcl_schema() -> ParsedSchema:
    """The shipped MCL schema, parsed (cached: parsing takes milliseconds, decoding must not)."""
    parsed = fastavro.parse_schema(json.loads(shipped_mcl_schema_json()))
    assert isinstance(parsed, dict), "an MCL schema is an Avro record"
    return parsed
