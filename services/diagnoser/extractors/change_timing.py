"""Change timing: which DataHub changes happened before the regression was observed (the context
snapshot's fetch time). A change logged after it cannot have caused it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.inputs import MetadataChangeRecord

METHOD = "MetadataChangeLog created.time of each record against the context snapshot's fetched_at"


def regression_time_ms(fetched_at: str | None) -> int | None:
    if not fetched_at:
        return None
    return int(datetime.fromisoformat(fetched_at).timestamp() * 1000)


def preceded(record: MetadataChangeRecord, regression_ms: int | None) -> bool:
    """True unless the record is known to come after the regression."""
    return record.time_ms is None or regression_ms is None or record.time_ms <= regression_ms


def change_timing_evidence(changes: Iterable[MetadataChangeRecord], regression_ms: int | None) -> Evidence:
    records = list(changes)
    before = [record for record in records if preceded(record, regression_ms)]
    after = [record for record in records if not preceded(record, regression_ms)]
    timed = [record.time_ms for record in before if record.time_ms is not None]
    lag_hours = round((regression_ms - max(timed)) / 3_600_000, 2) if timed and regression_ms is not None else None
    return make_evidence(
        EvidenceKind.CHANGE_TIMING,
        subject="metadata_changes",
        values={
            "regression_time_ms": regression_ms,
            "before": [f"{record.aspect}@{record.entity_urn}" for record in before],
            "after": [f"{record.aspect}@{record.entity_urn}" for record in after],
            "hours_from_last_change_to_regression": lag_hours,
        },
        summary=f"{len(before)} DataHub change(s) precede the regression, {len(after)} come after it"
        + (f"; the last one {lag_hours} h before" if lag_hours is not None else ""),
        source=EvidenceSource.METADATA,
        strength=1.0 if before else 0.0,
        method=METHOD,
    )
