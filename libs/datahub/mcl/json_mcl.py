"""JSON-encoded MCLs: the Avro record's field names in plain JSON (what ``MetadataChangeLogClass.to_obj()``
and DataHub's JSON serialisation write), parsed strictly into the same record shape as
:func:`libs.datahub.mcl.wire.decode_confluent` returns.

The aspect (and ``previousAspectValue``) is ``{"value": "<aspect JSON as a string>", "contentType":
"application/json"}``; the MCP-file form ``{"json": {...}}`` is accepted too. Avro's own JSON encoding
(union values wrapped as ``{"string": ...}``) is not: nothing in DataHub writes MCLs that way.
"""

from __future__ import annotations

from typing import Any

from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.strict_json import parse_strict_json


def decode_json_mcl(data: bytes | str) -> dict[str, Any]:
    """One JSON MCL -> record dict; raises MclDecodeError (``not_json``, ``non_finite_number``)."""
    record = parse_strict_json(data, "not_json", "the MCL")
    if not isinstance(record, dict):
        raise MclDecodeError("not_json", f"the MCL must be a JSON object, found {type(record).__name__}")
    return record
