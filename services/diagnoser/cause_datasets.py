"""Which upstream datasets a cause in the data lies in: those on the model's lineage whose schema holds a column
the diagnosis names as faulty, else the lineage's source datasets; most upstream first."""

from __future__ import annotations

from contracts.context_snapshot import ContextSnapshot
from contracts.events.diagnosis import RepairHints

DATASET_URN_PREFIX = "urn:li:dataset:"


def datasets_most_upstream_first(context: ContextSnapshot) -> list[str]:
    """Every dataset on the model's upstream lineage, the farthest from the model first (its longest path to the
    model counts), ties by urn."""
    hops: dict[str, int] = {}
    for path in context.upstream_paths:
        last = len(path.urns) - 1
        for index, urn in enumerate(path.urns):
            if urn.startswith(DATASET_URN_PREFIX):
                hops[urn] = max(hops.get(urn, 0), last - index)
    return sorted(hops, key=lambda urn: (-hops[urn], urn))


def faulty_columns(hints: RepairHints) -> frozenset[str]:
    """The source columns the diagnosis names as faulty in the data: renamed (both names), numeric arriving as
    text, with unseen categories, with risen nulls."""
    renamed = {name for rename in hints.renamed_columns for name in (rename.old, rename.new)}
    return frozenset({*renamed, *hints.text_numeric_columns, *hints.unseen_categories, *hints.null_columns})


def cause_datasets(context: ContextSnapshot, hints: RepairHints) -> list[str]:
    lineage = datasets_most_upstream_first(context)
    columns = faulty_columns(hints)
    holding = {
        field.dataset_urn
        for field in context.schema_fields
        if field.simple_path in columns or field.field_path in columns
    }
    named = [urn for urn in lineage if urn in holding]
    if named:
        return named
    sources = {path.urns[0] for path in context.upstream_paths if path.urns[0].startswith(DATASET_URN_PREFIX)}
    return [urn for urn in lineage if urn in sources]
