"""Fields of a DataHub ``schemaMetadata`` aspect (plain JSON): simple name, position, native type, type
class and description; and the field name a ``schemaField`` urn points at."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FieldShape:
    name: str
    position: int
    native_type: str
    type_class: str
    description: str


def schema_fields(aspect: Mapping[str, Any] | None) -> dict[str, FieldShape]:
    if not aspect:
        return {}
    fields = {}
    for position, field in enumerate(aspect.get("fields") or []):
        if not isinstance(field, Mapping) or "fieldPath" not in field:
            continue
        name = simple_path(str(field["fieldPath"]))
        fields[name] = FieldShape(
            name=name,
            position=position,
            native_type=str(field.get("nativeDataType") or ""),
            type_class=_type_class(field.get("type")),
            description=str(field.get("description") or ""),
        )
    return fields


def simple_path(field_path: str) -> str:
    """``[version=2.0].[type=struct].[type=long].tenure`` -> ``tenure``."""
    return ".".join(part for part in field_path.split(".") if part and not part.startswith("["))


def field_name(field_urn: str) -> str:
    """``urn:li:schemaField:(<dataset urn>,account_age_months)`` -> ``account_age_months``; other text as is."""
    if field_urn.startswith("urn:li:schemaField:(") and field_urn.endswith(")"):
        return field_urn[: -len(")")].rsplit(",", 1)[-1]
    return field_urn


def _type_class(type_aspect: Any) -> str:
    inner = type_aspect.get("type") if isinstance(type_aspect, Mapping) else None
    if isinstance(inner, Mapping) and inner:
        return str(next(iter(inner))).rsplit(".", 1)[-1].removesuffix("Type").lower()
    return ""
