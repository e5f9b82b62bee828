"""Source schema: columns the code reads that are gone from the incident window, columns that appeared,
and rename candidates (a gone column and a new column whose values are distributed alike)."""

from __future__ import annotations

from typing import Any

from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.profiling.drift import ks_statistic, psi_categorical
from services.diagnoser.profiling.numbers import formatted_numbers
from services.diagnoser.profiling.windows import ProfiledPair

METHOD = (
    "CSV headers of the approval and incident windows compared split by split; a new column is a rename candidate "
    "of a gone one when its values are distributed alike (KS for numbers, PSI for categories) within the policy's "
    "rename_max_distance"
)


def source_schema_evidence(
    pairs: tuple[ProfiledPair, ...], read_columns: list[str], thresholds: DiagnosisPolicy
) -> Evidence:
    gone: dict[str, list[str]] = {}
    new: dict[str, list[str]] = {}
    renames: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        gone[pair.split] = pair.gone_columns
        new[pair.split] = pair.new_columns
        for old in pair.gone_columns:
            match = _best_match(pair, old, thresholds)
            if match is not None and (old not in renames or match["distance"] < renames[old]["distance"]):
                renames[old] = match
    read_gone = sorted({name for names in gone.values() for name in names if name in read_columns})
    values = {
        "gone_columns": gone,
        "new_columns": new,
        "read_columns_gone": read_gone,
        "rename_candidates": [{"old": old, **match} for old, match in sorted(renames.items())],
    }
    if read_gone:
        summary = f"column(s) the code reads are gone from the incident window: {', '.join(read_gone)}"
        renamed = [f"{old} -> {renames[old]['new']}" for old in read_gone if old in renames]
        if renamed:
            summary += f"; likely renamed: {', '.join(renamed)}"
    else:
        summary = "every column the code reads is present in the incident window"
    return make_evidence(
        EvidenceKind.SOURCE_SCHEMA,
        subject="source_data",
        values=values,
        summary=summary,
        source=EvidenceSource.DATA,
        strength=1.0 if read_gone else 0.0,
        method=METHOD,
    )


def _best_match(pair: ProfiledPair, old: str, thresholds: DiagnosisPolicy) -> dict[str, Any] | None:
    before = pair.reference_profiles[old]
    best: dict[str, Any] | None = None
    for new in pair.new_columns:
        after = pair.current_profiles[new]
        if before.type_class == "numeric" and after.type_class in ("numeric", "numeric_text"):
            distance, how = (
                ks_statistic(formatted_numbers(pair.reference[old]), formatted_numbers(pair.current[new])),
                "ks",
            )
        elif before.type_class == after.type_class == "text":
            distance, how = psi_categorical(pair.reference[old], pair.current[new]), "psi"
        else:
            continue
        if distance <= thresholds.rename_max_distance and (best is None or distance < best["distance"]):
            best = {"new": new, "distance": round(distance, 6), "measure": how, "split": pair.split}
    return best
