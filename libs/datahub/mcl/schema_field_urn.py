"""Columns as ``(dataset urn, simple field path)``: parsing schemaField urns and normalising field paths.

``urn:li:schemaField:(<parent urn>,<field path>)``: the parent urn contains commas and parentheses and a
field path may contain commas, so the parent is found by balancing parentheses (the SDK's
``SchemaFieldUrn.from_string`` refuses paths with commas). Field paths are compared in their simple form
(``[version=2.0].[type=struct].a.[type=int].b`` -> ``a.b``): schemaMetadata and fine-grained lineage
do not always use the same form.
"""

from __future__ import annotations

from functools import lru_cache

from datahub.utilities.urns.field_paths import get_simple_field_path_from_v2_field_path

SCHEMA_FIELD_PREFIX = "urn:li:schemaField:("

Column = tuple[str, str]
"""(dataset urn, simple field path)."""


def simple_field_path(field_path: str) -> str:
    return get_simple_field_path_from_v2_field_path(field_path)


@lru_cache(maxsize=65536)
def column_of(urn: str) -> Column | None:
    """The (parent urn, simple field path) of a schemaField urn; None for any other urn or a malformed one."""
    if not urn.startswith(SCHEMA_FIELD_PREFIX) or not urn.endswith(")"):
        return None
    inner = urn[len(SCHEMA_FIELD_PREFIX) : -1]
    split = _end_of_parent(inner)
    if split is None or split >= len(inner) or inner[split] != ",":
        return None
    parent, field_path = inner[:split], inner[split + 1 :]
    if not parent.startswith("urn:li:") or not field_path:
        return None
    return parent, simple_field_path(field_path)


def _end_of_parent(inner: str) -> int | None:
    depth = 0
    for index, char in enumerate(inner):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return None
        elif char == "," and depth == 0:
            return index
    return None
