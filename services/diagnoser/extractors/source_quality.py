"""Source quality: per column the code reads, how far the rates of nulls, zeros and out-of-range values
rose from the approval window to the incident window. Out of range = beyond the approval range widened by
the policy's ``out_of_range_span`` range widths, or negative where the approval window had no negatives."""

from __future__ import annotations

import math

import pandas as pd

from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.profiling.numbers import formatted_numbers
from services.diagnoser.profiling.windows import ProfiledPair
from services.diagnoser.thresholds import DiagnosisThresholds

METHOD = (
    "per read column and split: null, zero and out-of-range rates in the incident window minus the approval "
    "window's; a rise counts from the policy's rate_rise; columns whose type changed are left to the type evidence"
)


def source_quality_evidence(
    pairs: tuple[ProfiledPair, ...], columns: list[str], thresholds: DiagnosisThresholds
) -> Evidence:
    rises: dict[str, dict[str, object]] = {}
    for pair in pairs:
        for name in columns:
            if name not in pair.reference_profiles or name not in pair.current_profiles:
                continue
            before, after = pair.reference_profiles[name], pair.current_profiles[name]
            numeric = before.type_class == "numeric" and after.type_class == "numeric"
            sizes = (before.rows, after.rows)
            figures = {
                "null": _significant(before.null_rate, after.null_rate, sizes, thresholds),
                "zero": _significant(before.zero_rate, after.zero_rate, sizes, thresholds) if numeric else 0.0,
                "out_of_range": _out_of_range_rise(pair, name, sizes, thresholds) if numeric else 0.0,
            }
            kind, rise = max(figures.items(), key=lambda item: item[1])
            if name not in rises or rise > rises[name]["rise"]:  # type: ignore[operator]
                rises[name] = {
                    "split": pair.split,
                    "rise": round(rise, 6),
                    "kind": kind,
                    "null_rate": [round(before.null_rate, 6), round(after.null_rate, 6)],
                    "zero_rate": [round(before.zero_rate, 6), round(after.zero_rate, 6)],
                    "out_of_range_rise": round(figures["out_of_range"], 6),
                }
    faulty = {name: figures for name, figures in rises.items() if figures["rise"] >= thresholds.rate_rise}  # type: ignore[operator]
    null_columns = sorted(
        name
        for name, figures in rises.items()
        if figures["null_rate"][1] - figures["null_rate"][0] >= thresholds.rate_rise  # type: ignore[index,operator]
    )
    top = max((float(figures["rise"]) for figures in faulty.values()), default=0.0)  # type: ignore[arg-type]
    return make_evidence(
        EvidenceKind.SOURCE_QUALITY,
        subject="source_data",
        values={"columns": rises, "faulty_columns": sorted(faulty), "null_columns": null_columns},
        summary=(
            "quality fell: "
            + "; ".join(f"{name}: {figures['kind']} rate +{figures['rise']:.1%}" for name, figures in faulty.items())
            if faulty
            else "null, zero and out-of-range rates of the read columns are as in the approval window"
        ),
        source=EvidenceSource.DATA,
        strength=min(1.0, top / thresholds.rate_rise_full) if faulty else 0.0,
        method=METHOD,
    )


def _significant(before: float, after: float, sizes: tuple[int, int], thresholds: DiagnosisThresholds) -> float:
    """The rise of a rate, or 0 when a two-proportion z-test puts it below the policy's rate_rise_z."""
    rise = after - before
    n_before, n_after = sizes
    if rise <= 0 or not n_before or not n_after:
        return 0.0
    pooled = (before * n_before + after * n_after) / (n_before + n_after)
    error = math.sqrt(pooled * (1 - pooled) * (1 / n_before + 1 / n_after))
    return rise if error == 0 or rise / error >= thresholds.rate_rise_z else 0.0


def _out_of_range_rise(pair: ProfiledPair, name: str, sizes: tuple[int, int], thresholds: DiagnosisThresholds) -> float:
    reference = formatted_numbers(pair.reference[name]).dropna()
    current = formatted_numbers(pair.current[name])
    if reference.empty or current.dropna().empty:
        return 0.0
    before = _out_of_range_rate(formatted_numbers(pair.reference[name]), reference, thresholds)
    return _significant(before, _out_of_range_rate(current, reference, thresholds), sizes, thresholds)


def _out_of_range_rate(values: pd.Series, reference: pd.Series, thresholds: DiagnosisThresholds) -> float:
    low, high = float(reference.min()), float(reference.max())
    span = (high - low) or abs(high) or 1.0
    outside = (values < low - thresholds.out_of_range_span * span) | (
        values > high + thresholds.out_of_range_span * span
    )
    if low >= 0:
        outside |= values < 0
    return float(outside.sum()) / len(values) if len(values) else 0.0
