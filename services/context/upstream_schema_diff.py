"""Breaking differences between two schemaMetadata values of one dataset (pure).

Fields are matched by their simple path (``[version=2.0].[type=int].a`` and ``a`` are the same column; a
v2 path also changes when only the type changes). Reported, per column:

- ``removed``: in the previous schema, not in the new one;
- ``renamed``: heuristic — when exactly one column is removed and exactly one is added and both have the
  same DataHub type (the ``SchemaFieldDataType`` member, e.g. NumberType), the pair is taken as a rename
  instead of a removal plus an addition. With more removals/additions nothing is paired;
- ``type_changed``: the DataHub type or the native type (compared case-insensitively) differs;
- ``nullability_changed``: ``nullable`` differs (both ways: a column that starts admitting nulls can
  break a model as surely as one that stops).

Added columns alone break nothing and are not reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from datahub.metadata.schema_classes import SchemaFieldClass, SchemaMetadataClass

from libs.datahub.mcl.schema_field_urn import simple_field_path

FieldChangeKind = Literal["removed", "renamed", "type_changed", "nullability_changed"]


@dataclass(frozen=True)
class FieldChange:
    kind: FieldChangeKind
    field_path: str
    """The column as it was (the old name for a rename)."""
    before: str | None = None
    after: str | None = None

    def as_json(self) -> dict[str, str | None]:
        return {"kind": self.kind, "field_path": self.field_path, "before": self.before, "after": self.after}

    def describe(self) -> str:
        if self.kind == "removed":
            return f"column {self.field_path!r} removed"
        if self.kind == "renamed":
            return f"column {self.field_path!r} renamed to {self.after!r} (heuristic)"
        if self.kind == "type_changed":
            return f"column {self.field_path!r} type changed from {self.before} to {self.after}"
        return f"column {self.field_path!r} nullability changed from {self.before} to {self.after}"


def schema_changes(previous: SchemaMetadataClass, current: SchemaMetadataClass) -> list[FieldChange]:
    """Breaking column changes, ordered by kind then column."""
    before, after = _columns(previous), _columns(current)
    removed = sorted(set(before) - set(after))
    added = sorted(set(after) - set(before))
    changes: list[FieldChange] = []
    if len(removed) == 1 and len(added) == 1 and _datahub_type(before[removed[0]]) == _datahub_type(after[added[0]]):
        changes.append(FieldChange("renamed", removed[0], removed[0], added[0]))
    else:
        changes.extend(FieldChange("removed", path, _type_of(before[path]), None) for path in removed)
    for path in sorted(set(before) & set(after)):
        old, new = before[path], after[path]
        if _type_of(old).lower() != _type_of(new).lower():
            changes.append(FieldChange("type_changed", path, _type_of(old), _type_of(new)))
        if bool(old.nullable) != bool(new.nullable):
            changes.append(FieldChange("nullability_changed", path, _nullability(old), _nullability(new)))
    order = {"removed": 0, "renamed": 1, "type_changed": 2, "nullability_changed": 3}
    return sorted(changes, key=lambda change: (order[change.kind], change.field_path))


def _columns(schema: SchemaMetadataClass) -> dict[str, SchemaFieldClass]:
    columns: dict[str, SchemaFieldClass] = {}
    for field in schema.fields or ():
        columns.setdefault(simple_field_path(field.fieldPath), field)
    return columns


def _datahub_type(field: SchemaFieldClass) -> str:
    return type(field.type.type).__name__.removesuffix("Class")


def _type_of(field: SchemaFieldClass) -> str:
    return f"{_datahub_type(field)} {field.nativeDataType}"


def _nullability(field: SchemaFieldClass) -> str:
    return "nullable" if field.nullable else "not null"
