"""Data interventions: under the base code, what winning back the data's loss took — a column repaired (renamed
back, re-parsed, unseen categories mapped, invalid values imputed, values quantile-mapped onto the approval
window), the rows with a fault left out of the scoring, or the label mix restored — and which columns."""

from __future__ import annotations

from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.experiments.data_experiment import SPECIFICITY, DataLocalisation

METHOD = (
    "base revision re-evaluated on the incident window with one kind of fault undone in both files (or the rows "
    "carrying it left out of the scoring, or both files resampled to the approval window's label mix); "
    "recovered = share of the base code's loss to the data won back; columns narrowed by delta debugging"
)


def data_interventions_unavailable(reason: str) -> Evidence:
    return make_evidence(
        EvidenceKind.DATA_INTERVENTIONS,
        subject="source_data",
        values={"available": False, "reason": reason},
        summary=f"data interventions not run: {reason}",
        source=EvidenceSource.EVALUATION,
        strength=0.0,
        method=METHOD,
    )


def data_interventions_evidence(localisation: DataLocalisation, ks_drift: float) -> Evidence:
    """``ks_drift``: the policy's drift threshold, against which the residual drift is read."""
    recovered = {kind: localisation.recovered(kind) for kind in SPECIFICITY if localisation.attempted(kind)}
    best = localisation.best()
    values = {
        "available": True,
        "data_loss": localisation.data_loss,
        "faults": [fault.as_dict() for fault in localisation.faults],
        "interventions": [item.as_dict() for item in localisation.interventions],
        "recovered": recovered,
        "best": best.as_dict() if best is not None else None,
        "culprit_columns": list(localisation.culprits),
        "label_moved": localisation.label_moved,
        "ks_drift": ks_drift,
        "residual_drift": {"column": localisation.residual_drift[0], "ks": localisation.residual_drift[1]}
        if localisation.residual_drift
        else None,
    }
    if best is None or not best.recovered:
        tried = len(localisation.interventions)
        summary = f"no intervention on the incident data wins back the base code's loss ({tried} tried)"
    else:
        summary = (
            f"{best.kind} ({best.how.replace('_', ' ')} in {', '.join(localisation.culprits or best.columns)}) wins "
            f"back {best.recovered:.0%} of the data's loss; "
            + ", ".join(f"{kind} {value:.0%}" for kind, value in recovered.items() if value is not None)
        )
    return make_evidence(
        EvidenceKind.DATA_INTERVENTIONS,
        subject="source_data",
        values=values,
        summary=summary,
        source=EvidenceSource.EVALUATION,
        strength=round(min(1.0, max(0.0, best.recovered or 0.0)), 4) if best else 0.0,
        method=METHOD,
    )
