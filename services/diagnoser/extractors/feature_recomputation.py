"""Feature recomputation: the base and the candidate feature code run on the same rows (the incident
window's eval.csv). Counts of invalid (empty, unparsable, non-finite) cells, values out of the base's range,
and per feature the share of rows that differ and the KS distance. Same rows in, so any difference is the
code's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.feature_runs import FeatureMatrix, invalid_counts
from services.diagnoser.profiling.drift import ks_statistic

METHOD = (
    "features command of both revisions run on the incident window's eval.csv; cells compared row by row "
    "(equal within a relative tolerance, both invalid counts as equal); invalid = empty, unparsable or non-finite"
)


def feature_recomputation_evidence(
    base: FeatureMatrix, candidate: FeatureMatrix, thresholds: DiagnosisPolicy
) -> Evidence:
    if base.frame is None or candidate.frame is None:
        reason = base.error or candidate.error or "unavailable"
        return make_evidence(
            EvidenceKind.FEATURE_RECOMPUTATION,
            subject="feature_matrix",
            values={"available": False, "reason": reason},
            summary=f"feature recomputation unavailable: {reason}",
            source=EvidenceSource.DATA,
            strength=0.0,
            method=METHOD,
        )
    before, after = base.frame, candidate.frame
    shared = [name for name in after.columns if name in before.columns]
    same_rows = len(before) == len(after)
    per_feature = {name: _compare(before[name], after[name], same_rows, thresholds) for name in shared}
    changed_rows = _changed_row_share(before, after, shared, same_rows, thresholds)
    base_invalid, candidate_invalid = invalid_counts(before), invalid_counts(after)
    added = [str(name) for name in after.columns if name not in before.columns]
    removed = [str(name) for name in before.columns if name not in after.columns]
    differ = bool(added or removed or not same_rows or changed_rows >= max(thresholds.feature_changed_rows, 1e-12))
    changed_features = sorted(name for name, figures in per_feature.items() if figures["changed_rows"] > 0)
    values = {
        "available": True,
        "data": candidate.data,
        "rows": {"base": len(before), "candidate": len(after)},
        "differ": differ,
        "changed_row_share": round(changed_rows, 6),
        "changed_features": changed_features,
        "added_features": added,
        "removed_features": removed,
        "base_invalid": sum(base_invalid.values()),
        "candidate_invalid": sum(candidate_invalid.values()),
        "base_invalid_by_feature": base_invalid,
        "candidate_invalid_by_feature": candidate_invalid,
        "out_of_base_range": {name: figures["out_of_base_range"] for name, figures in per_feature.items()},
        "per_feature": {name: figures for name, figures in per_feature.items() if figures["changed_rows"] > 0},
    }
    summary = (
        f"on the same {len(after)} rows the candidate's features differ from the base's in "
        f"{changed_rows:.1%} of rows ({', '.join(changed_features[:5]) or 'feature set changed'}); invalid cells: "
        f"base {values['base_invalid']}, candidate {values['candidate_invalid']}"
        if differ
        else f"on the same {len(after)} rows base and candidate compute identical features"
    )
    return make_evidence(
        EvidenceKind.FEATURE_RECOMPUTATION,
        subject="feature_matrix",
        values=values,
        summary=summary,
        source=EvidenceSource.DATA,
        strength=1.0 if differ else 0.0,
        method=METHOD,
    )


def _compare(
    before: pd.Series, after: pd.Series, same_rows: bool, thresholds: DiagnosisPolicy
) -> dict[str, float | int]:
    statistic = ks_statistic(before, after)
    finite = before.dropna()
    low, high = (float(finite.min()), float(finite.max())) if len(finite) else (np.nan, np.nan)
    out_of_range = int(((after < low) | (after > high)).sum()) if len(finite) else 0
    changed = int(_differs(before, after, thresholds).sum()) if same_rows else -1
    return {"changed_rows": changed, "ks": round(statistic, 6), "out_of_base_range": out_of_range}


def _differs(before: pd.Series, after: pd.Series, thresholds: DiagnosisPolicy) -> pd.Series:
    a, b = before.to_numpy(dtype=float), after.to_numpy(dtype=float)
    both_invalid = np.isnan(a) & np.isnan(b)
    close = np.isclose(a, b, rtol=thresholds.feature_tolerance, atol=thresholds.feature_tolerance)
    return pd.Series(~(close | both_invalid))


def _changed_row_share(
    before: pd.DataFrame, after: pd.DataFrame, shared: list[str], same_rows: bool, thresholds: DiagnosisPolicy
) -> float:
    if not same_rows or not len(after):
        return 1.0 if len(after) != len(before) else 0.0
    any_changed = np.zeros(len(after), dtype=bool)
    for name in shared:
        any_changed |= _differs(before[name], after[name], thresholds).to_numpy()
    return float(any_changed.mean())
