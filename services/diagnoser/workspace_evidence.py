"""Evidence from running the workspace's own commands on data: invalid feature values, source anomalies,
source data identity and the metric delta. Pure: the figures come in as observations."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence

HIGHER_IS_BETTER = frozenset({"higher_is_better", "higher", "maximize", "maximise", "increase"})
LOWER_IS_BETTER = frozenset({"lower_is_better", "lower", "minimize", "minimise", "decrease"})


class FeatureRun(BaseModel):
    """The features command run on one tree with one data file, and its invalid (non-finite) cells."""

    model_config = ConfigDict(frozen=True)

    tree: str
    data_digest: str
    invalid_total: int
    invalid_by_column: dict[str, int]
    invalid_rows: int


class SourceAnomalyCount(BaseModel):
    model_config = ConfigDict(frozen=True)

    column: str
    selected_by: str
    base_data_count: int
    candidate_data_count: int


class MetricComparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    metric: str
    direction: str | None
    tolerance: float | None
    base: float
    candidate: float
    measured_by: str


def invalid_values_evidence(base: FeatureRun, candidate: FeatureRun) -> Evidence:
    introduced = candidate.invalid_total - base.invalid_total
    return make_evidence(
        EvidenceKind.INVALID_FEATURE_VALUES,
        subject="feature_matrix",
        values={
            "base_total": base.invalid_total,
            "candidate_total": candidate.invalid_total,
            "introduced": introduced,
            "base_by_column": dict(sorted(base.invalid_by_column.items())),
            "candidate_by_column": dict(sorted(candidate.invalid_by_column.items())),
            "base_rows": base.invalid_rows,
            "candidate_rows": candidate.invalid_rows,
            "same_data": base.data_digest == candidate.data_digest,
        },
        summary=(
            f"features from the base code have {base.invalid_total} invalid value(s); "
            f"from the candidate code {candidate.invalid_total}"
            + (" on the same data" if base.data_digest == candidate.data_digest else " on different data")
        ),
        source=EvidenceSource.DATA,
    )


def source_identity_evidence(base_data_digest: str, candidate_data_digest: str) -> Evidence:
    identical = base_data_digest == candidate_data_digest
    return make_evidence(
        EvidenceKind.SOURCE_DATA_IDENTITY,
        subject="source_data",
        values={
            "base_digest": base_data_digest,
            "candidate_digest": candidate_data_digest,
            "identical": identical,
        },
        summary=(
            "base and candidate were run on byte-identical source data"
            if identical
            else "base and candidate were run on different source data"
        ),
        source=EvidenceSource.DATA,
    )


def source_anomaly_evidence(count: SourceAnomalyCount) -> Evidence:
    return make_evidence(
        EvidenceKind.SOURCE_ANOMALIES,
        subject=count.column,
        values={
            "column": count.column,
            "selected_by": count.selected_by,
            "base_data_count": count.base_data_count,
            "candidate_data_count": count.candidate_data_count,
            "increase": count.candidate_data_count - count.base_data_count,
        },
        summary=(
            f"{count.candidate_data_count} source row(s) with an anomalous {count.column} in the candidate "
            f"run's data, {count.base_data_count} in the base run's data"
        ),
        source=EvidenceSource.DATA,
    )


def metric_delta_evidence(comparison: MetricComparison) -> Evidence:
    delta = comparison.candidate - comparison.base
    worse = metric_got_worse(comparison.direction, delta)
    tolerance = comparison.tolerance
    regressed = None if worse is None else worse and (tolerance is None or abs(delta) > tolerance)
    return make_evidence(
        EvidenceKind.METRIC_DELTA,
        subject=comparison.metric,
        values={
            "metric": comparison.metric,
            "base": comparison.base,
            "candidate": comparison.candidate,
            "delta": round(delta, 6),
            "direction": comparison.direction,
            "tolerance": tolerance,
            "regressed": regressed,
            "measured_by": comparison.measured_by,
        },
        summary=f"{comparison.metric} moved from {comparison.base} to {comparison.candidate} ({delta:+.6f})",
        source=EvidenceSource.EVALUATION,
    )


def metric_got_worse(direction: str | None, delta: float) -> bool | None:
    """True when ``delta`` (candidate - base) is a move in the bad direction; None when unknown."""
    if direction is None:
        return None
    normalised = direction.strip().lower()
    if normalised in HIGHER_IS_BETTER:
        return delta < 0
    if normalised in LOWER_IS_BETTER:
        return delta > 0
    raise ValueError(f"unknown metric direction {direction!r}")
