"""Source drift: per column the code reads and per split, PSI (numbers on the approval deciles, categories
per value) and, for numbers, the KS statistic between the approval and the incident window."""

from __future__ import annotations

from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.profiling.drift import ks_statistic, psi_categorical, psi_numeric
from services.diagnoser.profiling.numbers import formatted_numbers
from services.diagnoser.profiling.windows import ProfiledPair

METHOD = "PSI (approval deciles / categories, missing values a bin) and two-sample KS per read column and split"


def source_drift_evidence(pairs: tuple[ProfiledPair, ...], columns: list[str], thresholds: DiagnosisPolicy) -> Evidence:
    per_column: dict[str, dict[str, float | str]] = {}
    for pair in pairs:
        for name in columns:
            if name not in pair.reference_profiles or name not in pair.current_profiles:
                continue
            before = pair.reference_profiles[name]
            if before.type_class != "numeric" and not before.categories:
                continue  # identifiers and free text: every value is new, a PSI would say nothing
            if before.type_class == "numeric":
                reference, current = formatted_numbers(pair.reference[name]), formatted_numbers(pair.current[name])
                psi = psi_numeric(reference, current)
                ks = ks_statistic(reference, current)
            else:
                psi, ks = psi_categorical(pair.reference[name], pair.current[name]), 0.0
            if name not in per_column or psi > per_column[name]["psi"]:  # type: ignore[operator]
                per_column[name] = {"split": pair.split, "psi": round(psi, 6), "ks": round(ks, 6)}
    drifted = sorted(
        name
        for name, figures in per_column.items()
        if figures["psi"] >= thresholds.psi_drift or figures["ks"] >= thresholds.ks_drift  # type: ignore[operator]
    )
    max_psi = max((float(figures["psi"]) for figures in per_column.values()), default=0.0)
    max_ks = max((float(figures["ks"]) for figures in per_column.values()), default=0.0)
    strength = min(1.0, max(max_psi / thresholds.psi_full, max_ks / thresholds.ks_drift / 2)) if drifted else 0.0
    return make_evidence(
        EvidenceKind.SOURCE_DRIFT,
        subject="source_data",
        values={"per_column": per_column, "drifted": drifted, "max_psi": round(max_psi, 6), "max_ks": round(max_ks, 6)},
        summary=(
            f"{len(drifted)} read column(s) shifted (max PSI {max_psi:.3f}, max KS {max_ks:.3f}): "
            f"{', '.join(drifted[:6]) or 'none'}"
        ),
        source=EvidenceSource.DATA,
        strength=strength,
        method=METHOD,
    )
