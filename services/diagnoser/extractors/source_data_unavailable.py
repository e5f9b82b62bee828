"""The source data evidence when a window's CSV cannot be read as a table: each piece reported as unavailable, with
the files and pandas' reasons, so its facts are unmeasured (``catalogue.facts.MEASURED_BY``), neither for nor
against a hypothesis, and nothing is read off a default that pretends the data was read."""

from __future__ import annotations

from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.extractors import (
    label_shift,
    source_categories,
    source_drift,
    source_quality,
    source_schema,
    source_types,
)
from services.diagnoser.profiling.frames import UnreadableWindows

MEASURES: tuple[tuple[EvidenceKind, str, str], ...] = (
    (EvidenceKind.SOURCE_SCHEMA, "source schema", source_schema.METHOD),
    (EvidenceKind.SOURCE_TYPES, "source types", source_types.METHOD),
    (EvidenceKind.SOURCE_CATEGORIES, "source categories", source_categories.METHOD),
    (EvidenceKind.SOURCE_QUALITY, "source quality", source_quality.METHOD),
    (EvidenceKind.SOURCE_DRIFT, "source drift", source_drift.METHOD),
    (EvidenceKind.LABEL_SHIFT, "label shift", label_shift.METHOD),
)


def source_data_unavailable(unreadable: UnreadableWindows, label: str) -> list[Evidence]:
    """Schema, types, categories, quality, drift and label shift, in the order ``_data_evidence`` gives them."""
    reason = str(unreadable)
    return [
        make_evidence(
            kind,
            subject=label if kind is EvidenceKind.LABEL_SHIFT else "source_data",
            values={"available": False, "reason": reason, "unreadable": unreadable.as_dicts()},
            summary=f"{what} not measured: {reason}",
            source=EvidenceSource.DATA,
            strength=0.0,
            method=method,
        )
        for kind, what, method in MEASURES
    ]
