"""Read DataHub MCP JSON files into typed acryl-datahub aspect objects.

Accepted entries (all three appear in DataHub's own connector output):

- MCPs whose aspect is ``{"json": {...}}`` (what ``write_metadata_file`` writes today);
- MCPs in the older serialised form ``{"value": "<json string>", "contentType": "application/json"}``;
- MCEs with a ``proposedSnapshot`` (one record per aspect of the snapshot).

Decoding goes through the SDK's own classes (``MetadataChangeProposalWrapper.from_obj``, which applies
``post_json_transform`` before ``AspectClass.from_obj``, and ``MetadataChangeEventClass.from_obj``), then
``validate()``, then a fidelity check (see :mod:`libs.datahub.decode_fidelity`) because the SDK silently
decodes unknown union members as another member. Anything malformed raises one
:class:`MetadataFileError` naming the file and the entry index. Entries that are well-formed but not
applicable (DELETE/PATCH change types, aspects this SDK version does not know, deprecated usage buckets)
are skipped and reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datahub.emitter.aspect import ASPECT_MAP, JSON_CONTENT_TYPE
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.emitter.serialization_helper import post_json_transform, pre_json_transform
from datahub.metadata.schema_classes import ChangeTypeClass, MetadataChangeEventClass, _Aspect
from datahub.utilities.urns.urn import guess_entity_type

from libs.canonical_json import strict_loads
from libs.datahub.decode_fidelity import DecodeMismatch, decode_mismatches
from libs.datahub.file_root import readable


class MetadataFileError(Exception):
    """A metadata file (or one entry of it) cannot be read."""

    def __init__(self, path: Path, reason: str, entry_index: int | None = None) -> None:
        self.path = path
        self.reason = reason
        self.entry_index = entry_index
        where = str(path) if entry_index is None else f"{path}, entry {entry_index}"
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True)
class AspectRecord:
    """One aspect of one entity, decoded into the SDK's aspect class; ``location`` says where it was read."""

    entity_type: str
    urn: str
    aspect_name: str
    aspect: _Aspect
    location: str
    entry_index: int


@dataclass(frozen=True)
class SkippedEntry:
    source: Path
    entry_index: int
    reason: str


@dataclass(frozen=True)
class LoadedMetadataFile:
    path: Path
    records: tuple[AspectRecord, ...]
    skipped: tuple[SkippedEntry, ...]
    warnings: tuple[str, ...]


class _EntryError(Exception):
    """An entry is malformed; wrapped into MetadataFileError with the path and index."""


@dataclass(frozen=True)
class _DecodedEntry:
    records: tuple[AspectRecord, ...] = ()
    skip_reason: str | None = None
    warnings: tuple[str, ...] = ()


def load_mcp_file(path: Path, root: Path | None = None) -> LoadedMetadataFile:
    """Decode every entry of one MCP/MCE JSON file; raise MetadataFileError on malformed input. A relative
    ``path`` is read under ``root`` when one is given (``libs/datahub/file_root.py``) and named as it is."""
    return decode_mcp_text(path, read_mcp_text(path, root))


def read_mcp_text(path: Path, root: Path | None = None) -> str:
    """The file's text (``path`` resolved as ``load_mcp_file`` does); MetadataFileError when it cannot be read."""
    try:
        return readable(path, root).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise MetadataFileError(path, f"cannot read the file: {error}") from None


def decode_mcp_text(path: Path, text: str) -> LoadedMetadataFile:
    """Decode the text of the MCP/MCE JSON file ``path`` (named in errors and warnings)."""
    entries = _json_array(path, text)
    records: list[AspectRecord] = []
    skipped: list[SkippedEntry] = []
    warnings: list[str] = []
    for index, entry in enumerate(entries):
        try:
            decoded = _decode_entry(entry, path, index)
        except _EntryError as error:
            raise MetadataFileError(path, str(error), index) from None
        records.extend(decoded.records)
        if decoded.skip_reason is not None:
            skipped.append(SkippedEntry(path, index, decoded.skip_reason))
        warnings.extend(f"{path}, entry {index}: {warning}" for warning in decoded.warnings)
    return LoadedMetadataFile(path, tuple(records), tuple(skipped), tuple(warnings))


def _json_array(path: Path, text: str) -> list[Any]:
    try:
        document = strict_loads(text)  # no NaN, Infinity or 1e999: no event could carry them on
    except (ValueError, RecursionError) as error:
        raise MetadataFileError(path, f"not valid JSON: {error}") from None
    if not isinstance(document, list):
        raise MetadataFileError(path, f"expected a JSON array of MCPs/MCEs, found {type(document).__name__}")
    return document


def _decode_entry(entry: Any, path: Path, index: int) -> _DecodedEntry:
    if not isinstance(entry, dict):
        raise _EntryError(f"expected an object, found {type(entry).__name__}")
    if "proposedSnapshot" in entry:
        return _decode_mce(entry, path, index)
    if "aspect" in entry or "aspectName" in entry:
        return _decode_mcp(entry, path, index)
    if "bucket" in entry:
        return _DecodedEntry(skip_reason="deprecated UsageAggregation entry")
    raise _EntryError("neither an MCP (aspectName/aspect) nor an MCE (proposedSnapshot)")


def _decode_mcp(entry: dict[str, Any], path: Path, index: int) -> _DecodedEntry:
    change_type = entry.get("changeType", ChangeTypeClass.UPSERT)
    if change_type != ChangeTypeClass.UPSERT:
        return _DecodedEntry(skip_reason=f"changeType {change_type} is not applied (only UPSERT)")
    urn = entry.get("entityUrn")
    if urn is None:
        return _DecodedEntry(skip_reason="no entityUrn (key-aspect-only MCPs are not applied)")
    entity_type = _entity_type_of(urn)
    aspect_name = entry.get("aspectName")
    if not isinstance(aspect_name, str) or not aspect_name:
        raise _EntryError("an MCP needs an aspectName")
    aspect_json = _aspect_json_of(entry.get("aspect"), aspect_name)
    if aspect_json is None:
        return _DecodedEntry(skip_reason=f"aspect {aspect_name} is not JSON (contentType)")
    if aspect_name not in ASPECT_MAP:
        return _DecodedEntry(skip_reason=f"aspect {aspect_name} is unknown to this acryl-datahub version")

    restli_json = pre_json_transform(aspect_json)
    wire_entry = {
        "entityType": entry.get("entityType", entity_type),
        "entityUrn": urn,
        "changeType": ChangeTypeClass.UPSERT,
        "aspectName": aspect_name,
        "aspect": {"value": json.dumps(restli_json), "contentType": JSON_CONTENT_TYPE},
    }
    try:
        wrapper = MetadataChangeProposalWrapper.from_obj(wire_entry)
    except Exception as error:
        raise _EntryError(f"aspect {aspect_name} of {urn} does not decode: {_describe(error)}") from None
    if not isinstance(wrapper, MetadataChangeProposalWrapper) or wrapper.aspect is None:
        raise _EntryError(f"aspect {aspect_name} of {urn} did not decode into a typed aspect")
    aspect = wrapper.aspect
    warnings = _check_fidelity(restli_json, aspect, f"aspect {aspect_name} of {urn}")
    record = AspectRecord(wrapper.entityType, urn, aspect_name, aspect, str(path), index)
    return _DecodedEntry(records=(record,), warnings=warnings)


def _decode_mce(entry: dict[str, Any], path: Path, index: int) -> _DecodedEntry:
    if entry.get("proposedDelta") is not None:
        return _DecodedEntry(skip_reason="MCE proposedDelta is not applied")
    snapshot_json = entry["proposedSnapshot"]
    if not isinstance(snapshot_json, dict) or len(snapshot_json) != 1:
        raise _EntryError("proposedSnapshot must be an object with exactly one snapshot member")
    # pre then post: accepts snapshots written with com.linkedin.* or com.linkedin.pegasus2avro.* names.
    restli_snapshot = pre_json_transform(snapshot_json)
    try:
        event = MetadataChangeEventClass.from_obj({"proposedSnapshot": post_json_transform(restli_snapshot)})
        valid = event.validate()
    except Exception as error:
        raise _EntryError(f"proposedSnapshot does not decode: {_describe(error)}") from None
    if not valid:
        raise _EntryError("proposedSnapshot does not match the MetadataChangeEvent schema")
    decoded_snapshot = pre_json_transform(event.to_obj())["proposedSnapshot"]
    warnings = _report_mismatches(decode_mismatches(restli_snapshot, decoded_snapshot), "proposedSnapshot")
    snapshot = event.proposedSnapshot
    urn = snapshot.urn
    entity_type = _entity_type_of(urn)
    records = tuple(
        AspectRecord(entity_type, urn, aspect.get_aspect_name(), aspect, str(path), index)
        for aspect in snapshot.aspects
    )
    return _DecodedEntry(records=records, warnings=warnings)


def _entity_type_of(urn: Any) -> str:
    if not isinstance(urn, str) or not urn.startswith("urn:li:") or urn.count(":") < 3:
        raise _EntryError(f"entityUrn is not a DataHub urn: {urn!r}")
    return guess_entity_type(urn)


def _aspect_json_of(aspect: Any, aspect_name: str) -> dict[str, Any] | None:
    if not isinstance(aspect, dict):
        raise _EntryError(f"aspect {aspect_name} must be an object, found {type(aspect).__name__}")
    if "json" in aspect:
        payload = aspect["json"]
    elif "value" in aspect:
        if aspect.get("contentType", JSON_CONTENT_TYPE) != JSON_CONTENT_TYPE:
            return None
        payload = _parse_serialised_aspect(aspect["value"], aspect_name)
    else:
        raise _EntryError(f'aspect {aspect_name} has neither "json" nor "value"')
    if not isinstance(payload, dict):
        raise _EntryError(f"aspect {aspect_name} must be a JSON object, found {type(payload).__name__}")
    return payload


def _parse_serialised_aspect(value: Any, aspect_name: str) -> Any:
    if not isinstance(value, str):
        raise _EntryError(f"aspect {aspect_name} value must be a JSON string")
    try:
        return strict_loads(value)
    except (ValueError, RecursionError) as error:
        raise _EntryError(f"aspect {aspect_name} value is not valid JSON: {error}") from None


def _check_fidelity(restli_json: dict[str, Any], aspect: _Aspect, what: str) -> tuple[str, ...]:
    try:
        valid = aspect.validate()
        decoded = pre_json_transform(aspect.to_obj())
    except Exception as error:
        raise _EntryError(f"{what} does not validate: {_describe(error)}") from None
    if not valid:
        raise _EntryError(f"{what} does not match the {type(aspect).__name__} schema")
    return _report_mismatches(decode_mismatches(restli_json, decoded), what)


def _report_mismatches(mismatches: list[DecodeMismatch], what: str) -> tuple[str, ...]:
    errors = [mismatch for mismatch in mismatches if mismatch.kind != "unknown-field"]
    if errors:
        raise _EntryError(f"{what} decodes wrongly: {errors[0].describe()}")
    return tuple(f"{what}: {mismatch.describe()}" for mismatch in mismatches)


def _describe(error: BaseException) -> str:
    text = str(error)
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(error).__name__}: {text}"
