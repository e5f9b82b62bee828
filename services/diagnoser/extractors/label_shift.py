"""Label shift: the label column's distribution in the incident window against the approval window's, per
split. Class labels (few distinct values): total variation distance of the class shares; numeric labels:
the KS statistic and the mean."""

from __future__ import annotations

from typing import Any

from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.profiling.drift import ks_statistic
from services.diagnoser.profiling.numbers import plain_numbers
from services.diagnoser.profiling.windows import ProfiledPair

METHOD = (
    "label column per split: class labels compared by total variation distance of class shares, numeric labels "
    "by two-sample KS"
)


def label_shift_evidence(pairs: tuple[ProfiledPair, ...], label: str, thresholds: DiagnosisPolicy) -> Evidence:
    per_split: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        if label not in pair.reference.columns or label not in pair.current.columns:
            continue
        before, after = pair.reference[label].dropna(), pair.current[label].dropna()
        if before.nunique() <= thresholds.max_categories:
            reference = before.astype(str).value_counts(normalize=True)
            current = after.astype(str).value_counts(normalize=True)
            classes = sorted(set(reference.index) | set(current.index))
            distance = 0.5 * sum(abs(reference.get(c, 0.0) - current.get(c, 0.0)) for c in classes)
            per_split[pair.split] = {
                "measure": "total_variation",
                "distance": round(float(distance), 6),
                "approval_shares": {c: round(float(reference.get(c, 0.0)), 6) for c in classes},
                "incident_shares": {c: round(float(current.get(c, 0.0)), 6) for c in classes},
            }
        else:
            statistic = ks_statistic(plain_numbers(before), plain_numbers(after))
            per_split[pair.split] = {
                "measure": "ks",
                "distance": round(statistic, 6),
                "approval_mean": round(float(plain_numbers(before).mean()), 6),
                "incident_mean": round(float(plain_numbers(after).mean()), 6),
            }
    if not per_split:
        return make_evidence(
            EvidenceKind.LABEL_SHIFT,
            subject=label,
            values={"available": False},
            summary=f"label shift unavailable: no {label} column in both windows",
            source=EvidenceSource.DATA,
            strength=0.0,
            method=METHOD,
        )
    distance = max(figures["distance"] for figures in per_split.values())
    shifted = distance >= thresholds.label_shift
    return make_evidence(
        EvidenceKind.LABEL_SHIFT,
        subject=label,
        values={"available": True, "per_split": per_split, "distance": distance, "shifted": shifted},
        summary=f"the label {label} moved by {distance:.3f} between the windows"
        + ("" if shifted else " (below the policy's label_shift)"),
        source=EvidenceSource.DATA,
        strength=min(1.0, distance / thresholds.label_shift_full) if shifted else 0.0,
        method=METHOD,
    )
