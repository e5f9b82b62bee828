"""Read MetadataChangeLog-shaped records (a bundle's ``datahub/changes.json``) into ``MetadataChange``.

Each record carries the aspect before (``previousAspectValue``) and after (``aspect``), either as DataHub's
GenericAspect (``{"contentType": "application/json", "value": "<json string>"}``) or as a plain object.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from contracts.context_snapshot import MetadataChange, Provenance
from libs.canonical_json import strict_loads
from libs.datahub.file_root import readable

EPOCH_ISO = "1970-01-01T00:00:00+00:00"


class ChangeRecordsError(ValueError):
    """The change file is missing, not JSON, or holds a record that is not MCL-shaped."""


def read_change_records(path: Path, root: Path | None = None) -> list[MetadataChange]:
    """A relative ``path`` is read under ``root`` when one is given (``libs/datahub/file_root.py``) and named as it
    is in each record's provenance."""
    try:
        document = strict_loads(readable(Path(path), root).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ChangeRecordsError(f"{path}: not a readable JSON file: {exc}") from exc
    if not isinstance(document, list):
        raise ChangeRecordsError(f"{path}: a change file is a JSON list of MetadataChangeLog records")
    return [_change(record, f"{path}[{index}]", str(path)) for index, record in enumerate(document)]


def _change(record: Any, where: str, location: str) -> MetadataChange:
    if not isinstance(record, dict):
        raise ChangeRecordsError(f"{where}: a record is a JSON object")
    if not str(record.get("entityUrn", "")).startswith("urn:li:"):
        raise ChangeRecordsError(f"{where}: entityUrn must be a DataHub urn, got {record.get('entityUrn')!r}")
    created = record.get("created") or {}
    changed_at = _iso(created.get("time")) if isinstance(created, dict) else None
    try:
        return MetadataChange(
            entity_urn=record.get("entityUrn", ""),
            entity_type=record.get("entityType") or _entity_type(record.get("entityUrn", "")),
            aspect=record.get("aspectName", ""),
            change_type=record.get("changeType", "UPSERT"),
            changed_at=changed_at,
            actor=created.get("actor") if isinstance(created, dict) else None,
            previous=_aspect(record.get("previousAspectValue"), where, "previousAspectValue"),
            current=_aspect(record.get("aspect"), where, "aspect"),
            provenance=Provenance(
                provider="file",
                urn=record.get("entityUrn", ""),
                aspect=record.get("aspectName", "") or "unknown",
                fetched_at=changed_at or EPOCH_ISO,
                location=location,
            ),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise ChangeRecordsError(f"{where}: {field}: {first['msg']}") from exc


def _aspect(value: Any, where: str, name: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, dict) and isinstance(value.get("value"), str) and "contentType" in value:
        try:
            value = strict_loads(value["value"])
        except ValueError as exc:
            raise ChangeRecordsError(f"{where}: {name}.value is not JSON: {exc}") from exc
    if isinstance(value, dict) and set(value) == {"json"} and isinstance(value["json"], dict):
        value = value["json"]
    if not isinstance(value, dict):
        raise ChangeRecordsError(f"{where}: {name} must be an object")
    return value


def _iso(millis: Any) -> str | None:
    if not isinstance(millis, int | float) or isinstance(millis, bool):
        return None
    return datetime.fromtimestamp(millis / 1000, tz=UTC).isoformat()


def _entity_type(urn: str) -> str:
    parts = urn.split(":")
    return parts[2] if len(parts) > 2 else "unknown"
