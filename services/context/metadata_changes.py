"""Attach the logged metadata changes that concern an incident's model and its upstream entities."""

from __future__ import annotations

from collections.abc import Sequence

from contracts.context_snapshot import ContextSnapshot, MetadataChange

SCHEMA_FIELD_PREFIX = "urn:li:schemaField:("


def with_changes(snapshot: ContextSnapshot, records: Sequence[MetadataChange]) -> ContextSnapshot:
    """The snapshot plus every record about the model, an entity in its context, or a field of one."""
    known = {snapshot.model_urn, *(entity.urn for entity in snapshot.entities)}
    relevant = tuple(record for record in records if _owner_urn(record.entity_urn) in known)
    if not relevant:
        return snapshot
    return ContextSnapshot.model_validate({**snapshot.model_dump(), "changes": (*snapshot.changes, *relevant)})


def _owner_urn(urn: str) -> str:
    """A schemaField's dataset, or the urn itself."""
    if urn.startswith(SCHEMA_FIELD_PREFIX) and urn.endswith(")"):
        inner = urn[len(SCHEMA_FIELD_PREFIX) : -1]
        return inner.rsplit(",", 1)[0]
    return urn
