"""Feature drift: the base revision's features on the approval window's eval rows against the same code's
features on the incident window's eval rows. Same code, so any shift is the data's, as the model sees it."""

from __future__ import annotations

from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.feature_runs import FeatureMatrix
from services.diagnoser.profiling.drift import ks_statistic, psi_numeric

METHOD = "base features command on approval and incident eval.csv; PSI on the approval deciles and KS per feature"


def feature_drift_evidence(
    on_approval: FeatureMatrix, on_incident: FeatureMatrix, thresholds: DiagnosisPolicy
) -> Evidence:
    if on_approval.frame is None or on_incident.frame is None:
        reason = on_approval.error or on_incident.error or "unavailable"
        return make_evidence(
            EvidenceKind.FEATURE_DRIFT,
            subject="feature_matrix",
            values={"available": False, "reason": reason},
            summary=f"feature drift unavailable: {reason}",
            source=EvidenceSource.DATA,
            strength=0.0,
            method=METHOD,
        )
    before, after = on_approval.frame, on_incident.frame
    per_feature = {}
    for name in before.columns:
        if name not in after.columns:
            continue
        statistic = ks_statistic(before[name], after[name])
        per_feature[str(name)] = {"psi": psi_numeric(before[name], after[name]), "ks": round(statistic, 6)}
    drifted = sorted(
        name
        for name, figures in per_feature.items()
        if figures["psi"] >= thresholds.psi_drift or figures["ks"] >= thresholds.ks_drift
    )
    max_psi = max((figures["psi"] for figures in per_feature.values()), default=0.0)
    max_ks = max((figures["ks"] for figures in per_feature.values()), default=0.0)
    strength = min(1.0, max(max_psi / thresholds.psi_full, max_ks / thresholds.ks_drift / 2))
    return make_evidence(
        EvidenceKind.FEATURE_DRIFT,
        subject="feature_matrix",
        values={
            "available": True,
            "max_psi": round(max_psi, 6),
            "max_ks": round(max_ks, 6),
            "drifted": drifted,
            "per_feature": per_feature,
        },
        summary=(
            f"{len(drifted)} of {len(per_feature)} features shifted between the windows under the base code "
            f"(max PSI {max_psi:.3f}, max KS {max_ks:.3f}): {', '.join(drifted[:5]) or 'none'}"
        ),
        source=EvidenceSource.DATA,
        strength=strength if drifted else 0.0,
        method=METHOD,
    )
