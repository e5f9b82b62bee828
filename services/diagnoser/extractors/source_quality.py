"""Source quality: per column the code reads, whether invalid values rose from the approval window to the incident
window: empty cells, a new point mass (a sentinel the approval window hardly had), negative values where the
approval window had none, text that is no number in a numeric column. Valid values beyond the approval range
are not a quality fault (that is drift), nor is a binary flag whose share moves with the label mix."""

from __future__ import annotations

import pandas as pd

from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.experiments.column_cells import ColumnCells
from services.diagnoser.experiments.column_faults import invalid_value_rises
from services.diagnoser.profiling.windows import ProfiledPair

METHOD = (
    "per read column, train and eval rows of each window together: rates of empty cells, new point masses "
    "(sentinels), negatives where the approval window had none and unparsable text; a rise counts from the "
    "policy's rate_rise when its two-proportion z reaches rate_rise_z; columns whose type changed are left to "
    "the type evidence"
)


def source_quality_evidence(
    pairs: tuple[ProfiledPair, ...], columns: list[str], thresholds: DiagnosisPolicy
) -> Evidence:
    approval = pd.concat([pair.reference for pair in pairs], ignore_index=True)
    incident = pd.concat([pair.current for pair in pairs], ignore_index=True)
    found: dict[str, dict[str, object]] = {}
    for name in columns:
        if name not in approval.columns or name not in incident.columns:
            continue
        before, after = ColumnCells(approval[name]), ColumnCells(incident[name])
        numeric = before.numeric_share >= thresholds.numeric_parse_rate
        rises = invalid_value_rises(before, after, numeric, thresholds)
        if rises:
            found[name] = {**rises, "rise": round(_largest_rise(rises, before, after), 6)}
    top = max((float(figures["rise"]) for figures in found.values()), default=0.0)  # type: ignore[arg-type]
    null_columns = sorted(name for name, figures in found.items() if "null_rate" in figures)
    return make_evidence(
        EvidenceKind.SOURCE_QUALITY,
        subject="source_data",
        values={"columns": found, "faulty_columns": sorted(found), "null_columns": null_columns},
        summary=(
            "invalid values rose: "
            + "; ".join(
                f"{name}: {', '.join(key for key in figures if key != 'rise')} +{figures['rise']:.1%}"
                for name, figures in found.items()
            )
            if found
            else "no invalid values (nulls, sentinels, impossible or unparsable values) rose in the read columns"
        ),
        source=EvidenceSource.DATA,
        strength=min(1.0, top / thresholds.rate_rise_full) if found else 0.0,
        method=METHOD,
    )


def _largest_rise(rises: dict[str, object], before: ColumnCells, after: ColumnCells) -> float:
    figures = [value[1] - value[0] for key, value in rises.items() if key.endswith("_rate")]  # type: ignore[index]
    sentinels = rises.get("sentinels") or []
    if sentinels:
        b, a = before.stripped, after.stripped
        figures.append(float(a.isin(sentinels).mean()) - float(b.isin(sentinels).mean()))  # type: ignore[arg-type]
    return max(figures, default=0.0)
