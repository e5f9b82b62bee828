"""Schema history: from DataHub ``schemaMetadata`` changes (previous against current aspect) the fields
that were removed, added, renamed (a removed and an added field of the same type at the same position or
with the same description, or the only such pair) and retyped (same name, other native type or type class).
Only changes to assets on a path into the model that precede the regression count."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from contracts.context_snapshot import ContextSnapshot
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.extractors.change_timing import preceded
from services.diagnoser.extractors.lineage_relevance import relevance
from services.diagnoser.inputs import MetadataChangeRecord
from services.diagnoser.schema_fields import FieldShape, schema_fields

METHOD = (
    "schemaMetadata previous vs current aspect of each change record; renamed = removed + added field with the "
    "same type and position or description; retyped = same field, other nativeDataType or type; weighted by "
    "lineage relevance, changes after the regression ignored"
)


def schema_history_evidence(
    changes: Iterable[MetadataChangeRecord],
    read_columns: list[str],
    dataset_urn: str | None,
    context: ContextSnapshot | None,
    regression_ms: int | None,
) -> Evidence:
    renamed: list[dict[str, Any]] = []
    removed: list[str] = []
    added: list[str] = []
    retyped: list[dict[str, Any]] = []
    weight = 0.0
    records = [r for r in changes if r.aspect == "schemaMetadata" and preceded(r, regression_ms)]
    for record in records:
        asset_relevance = relevance(record.entity_urn, dataset_urn, context)
        if asset_relevance == 0:
            continue
        before, after = schema_fields(record.previous), schema_fields(record.current)
        gone = [before[name] for name in before if name not in after]
        new = [after[name] for name in after if name not in before]
        pairs = _renames(gone, new)
        renamed.extend({"old": old.name, "new": new_.name, "asset": record.entity_urn} for old, new_ in pairs)
        paired_old = {old.name for old, _ in pairs}
        paired_new = {new_.name for _, new_ in pairs}
        removed.extend(field.name for field in gone if field.name not in paired_old)
        added.extend(field.name for field in new if field.name not in paired_new)
        retyped.extend(
            {
                "field": name,
                "before": before[name].native_type or before[name].type_class,
                "after": after[name].native_type or after[name].type_class,
                "asset": record.entity_urn,
            }
            for name in before
            if name in after and _retyped(before[name], after[name])
        )
        weight = max(weight, asset_relevance)
    structural = sorted({item["old"] for item in renamed} | set(removed))
    read_structural = [name for name in structural if name in read_columns]
    read_retyped = sorted({item["field"] for item in retyped if item["field"] in read_columns})
    values = {
        "records": len(records),
        "renamed": renamed,
        "removed": sorted(set(removed)),
        "added": sorted(set(added)),
        "retyped": retyped,
        "read_columns_renamed_or_removed": read_structural,
        "read_columns_retyped": read_retyped,
        "relevance": weight,
    }
    parts = [f"renamed {item['old']} -> {item['new']}" for item in renamed]
    parts += [f"removed {name}" for name in sorted(set(removed))]
    parts += [f"retyped {item['field']} {item['before']} -> {item['after']}" for item in retyped]
    touches_read = bool(read_structural or read_retyped)
    return make_evidence(
        EvidenceKind.SCHEMA_HISTORY,
        subject=dataset_urn or "upstream",
        values=values,
        summary=("DataHub schema history: " + "; ".join(parts)) if parts else "no schema change logged in DataHub",
        source=EvidenceSource.METADATA,
        strength=weight if touches_read else weight / 2 if parts else 0.0,
        method=METHOD,
    )


def _renames(gone: list[FieldShape], new: list[FieldShape]) -> list[tuple[FieldShape, FieldShape]]:
    pairs = []
    free = list(new)
    for old in gone:
        same_type = [field for field in free if _same_type(old, field)]
        match = next((field for field in same_type if field.position == old.position), None)
        match = match or next((f for f in same_type if old.description and f.description == old.description), None)
        if match is None and len(gone) == 1 and len(same_type) == 1:
            match = same_type[0]
        if match is not None:
            pairs.append((old, match))
            free.remove(match)
    return pairs


def _same_type(a: FieldShape, b: FieldShape) -> bool:
    return a.native_type == b.native_type and a.type_class == b.type_class


def _retyped(a: FieldShape, b: FieldShape) -> bool:
    return a.native_type != b.native_type or a.type_class != b.type_class
