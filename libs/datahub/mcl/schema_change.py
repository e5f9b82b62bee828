"""A schema change applied to a dataset's schemaMetadata with the SDK's own classes (for emitters and tests)."""

from __future__ import annotations

import copy
from typing import Literal

from datahub.metadata.schema_classes import SchemaMetadataClass

SchemaChange = Literal["remove_field", "rename_field", "make_nullable", "make_required"]


class SchemaChangeError(ValueError):
    pass


def changed_schema(
    current: SchemaMetadataClass, change: SchemaChange, field: str, to: str | None = None
) -> SchemaMetadataClass:
    """A new schemaMetadata: the current one with one field removed, renamed or its nullability flipped."""
    new = copy.deepcopy(current)
    matching = [f for f in new.fields if f.fieldPath == field]
    if not matching:
        raise SchemaChangeError(f"{field!r} is not a field of this schema")
    target = matching[0]
    if change == "remove_field":
        new.fields = [f for f in new.fields if f is not target]
    elif change == "rename_field":
        if not to:
            raise SchemaChangeError("rename_field needs the new name (to)")
        target.fieldPath = to
    elif change in ("make_nullable", "make_required"):
        target.nullable = change == "make_nullable"
    else:
        raise SchemaChangeError(f"unknown change {change!r}")
    new.validate()
    return new
