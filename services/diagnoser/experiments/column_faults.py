"""What is wrong, column by column, in the incident window's source data, measured against the approval window:
the kinds of fault a repair can undo. Each fault says which cells (or rows) carry it, so the experiment can
repair exactly those cells or score without those rows.

- ``schema``: a column of the approval window is gone and a new column is distributed like it (a rename);
- ``type``: a column numeric in the approval window arrives as formatted text ("1,234.50", "$12");
- ``category``: a categorical column carries values the approval window never had;
- ``quality``: invalid values rose: empty cells, a new point mass (a sentinel such as -999 or 0 that the
  approval window hardly had), negative values where the approval window had none, text that is no number;
- ``drift``: a numeric column's valid values moved (KS), for example beyond the approval window's range.

Only rises that pass a two-proportion z-test count, so window noise is not a fault. Binary flags whose share
moves with the label mix are no fault: both of their values were common before."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.experiments.column_cells import NULL_TOKENS, ColumnCells, is_null
from services.diagnoser.profiling.drift import ks_statistic, psi_categorical
from services.diagnoser.profiling.numbers import formatted_numbers, plain_numbers

FaultKind = Literal["schema", "type", "category", "quality", "drift"]
MIN_DISTINCT_FOR_DRIFT = 10
POINT_MASS_RATIO = 10.0


@dataclass(frozen=True)
class ColumnFault:
    kind: FaultKind
    column: str
    detail: dict[str, object] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "column": self.column, **self.detail}

    @property
    def unseen(self) -> tuple[str, ...]:
        """A category fault's values the approval window never had (empty for other kinds)."""
        values = self.detail.get("unseen")
        return tuple(str(value) for value in values) if isinstance(values, list | tuple) else ()

    @property
    def renamed_to(self) -> str | None:
        """A schema fault's new name for the gone column; None when no column matched."""
        target = self.detail.get("renamed_to")
        return target if isinstance(target, str) else None

    @property
    def value_range(self) -> tuple[float, float] | None:
        """A drift fault's approval range of the column's values (low, high)."""
        bounds = self.detail.get("range")
        if not isinstance(bounds, list | tuple) or len(bounds) != 2:
            return None
        low, high = bounds
        return float(low), float(high)


def find_faults(
    approval: pd.DataFrame,
    incident: pd.DataFrame,
    label: str,
    thresholds: DiagnosisPolicy,
    logged_renames: dict[str, str] | None = None,
) -> list[ColumnFault]:
    """``approval`` and ``incident`` are raw text frames (train and eval rows together); ``logged_renames``
    (old -> new, from DataHub's schema history) pair a gone column with a new one the values alone cannot."""
    faults: list[ColumnFault] = []
    gone = [name for name in approval.columns if name not in incident.columns and name != label]
    new = [name for name in incident.columns if name not in approval.columns and name != label]
    faults.extend(_renames(approval, incident, gone, new, thresholds, logged_renames or {}))
    for name in approval.columns:
        if name == label or name not in incident.columns:
            continue
        before, after = approval[name], incident[name]
        before_cells, after_cells = ColumnCells(before), ColumnCells(after)
        numeric_before = before_cells.numeric_share >= thresholds.numeric_parse_rate
        if numeric_before and _is_formatted_text(after, thresholds):
            faults.append(ColumnFault("type", name, {"parse_rate": round(after_cells.numeric_share, 4)}))
            continue
        if not numeric_before and _is_categorical(before, thresholds):
            unseen = _unseen(before, after)
            share = float(after.isin(unseen).mean()) if len(after) else 0.0
            if unseen and share >= thresholds.unseen_share:
                faults.append(
                    ColumnFault("category", name, {"unseen": sorted(unseen)[:20], "row_share": round(share, 4)})
                )
        invalid = invalid_value_rises(before_cells, after_cells, numeric_before, thresholds)
        if invalid:
            faults.append(ColumnFault("quality", name, invalid))
        if numeric_before:
            drift = _drift(before, after, thresholds)
            if drift:
                faults.append(ColumnFault("drift", name, drift))
    return faults


def invalid_mask(cells: pd.Series, fault: ColumnFault) -> pd.Series:
    """The cells of a quality fault: nulls, the sentinel values, negatives, unparsable text (as its detail says)."""
    mask = pd.Series(False, index=cells.index)
    detail = fault.detail
    if "null_rate" in detail:
        mask |= is_null(cells)
    for value in detail.get("sentinels", []):  # type: ignore[attr-defined]
        mask |= cells.astype(str).str.strip() == value
    numbers = plain_numbers(cells)
    if "negative_rate" in detail:
        mask |= numbers < 0
    if "unparsable_rate" in detail:
        mask |= numbers.isna() & ~is_null(cells)
    return mask


def numeric_share(cells: pd.Series) -> float:
    return ColumnCells(cells).numeric_share


def _is_formatted_text(cells: pd.Series, thresholds: DiagnosisPolicy) -> bool:
    present = ~is_null(cells)
    if not present.any():
        return False
    plain = float(plain_numbers(cells[present]).notna().mean())
    formatted = float(formatted_numbers(cells[present]).notna().mean())
    return plain < thresholds.numeric_parse_rate <= formatted


def _is_categorical(cells: pd.Series, thresholds: DiagnosisPolicy) -> bool:
    present = cells[~is_null(cells)]
    return 0 < present.nunique() <= thresholds.max_categories


def _unseen(before: pd.Series, after: pd.Series) -> set[str]:
    known = set(before[~is_null(before)].astype(str))
    return set(after[~is_null(after)].astype(str)) - known


def _rise(before: float, after: float, sizes: tuple[int, int], thresholds: DiagnosisPolicy) -> float:
    """The rise of a rate when it reaches ``rate_rise`` and passes the z-test, else 0."""
    rise = after - before
    n_before, n_after = sizes
    if rise < thresholds.rate_rise or not n_before or not n_after:
        return 0.0
    pooled = (before * n_before + after * n_after) / (n_before + n_after)
    error = math.sqrt(pooled * (1 - pooled) * (1 / n_before + 1 / n_after))
    return rise if error == 0 or rise / error >= thresholds.rate_rise_z else 0.0


def invalid_value_rises(
    before: ColumnCells, after: ColumnCells, numeric: bool, thresholds: DiagnosisPolicy
) -> dict[str, object]:
    sizes = (len(before), len(after))
    found: dict[str, object] = {}
    nulls = (float(before.null.mean()), float(after.null.mean()))
    if _rise(*nulls, sizes, thresholds):
        found["null_rate"] = [round(nulls[0], 4), round(nulls[1], 4)]
    if numeric:
        sentinels = _new_point_masses(before, after, thresholds)
        if sentinels:
            found["sentinels"] = sentinels
        b, a = before.plain, after.plain
        if (b.dropna() >= 0).all():
            negatives = (float((b < 0).mean()), float((a < 0).mean()))
            if _rise(*negatives, sizes, thresholds):
                found["negative_rate"] = [round(negatives[0], 4), round(negatives[1], 4)]
        unparsable = (float((b.isna() & ~before.null).mean()), float((a.isna() & ~after.null).mean()))
        if _rise(*unparsable, sizes, thresholds):
            found["unparsable_rate"] = [round(unparsable[0], 4), round(unparsable[1], 4)]
    return found


def _new_point_masses(before: ColumnCells, after: ColumnCells, thresholds: DiagnosisPolicy) -> list[str]:
    """Values that became a point mass: at least ``rate_rise`` of the rows (significantly more than before) where
    the approval window had fewer than ``rate_rise`` of them, and standing out from the column's other values
    (at least ``POINT_MASS_RATIO`` times the median share of a value). A new segment's values spread over many
    values; a sentinel piles onto one."""
    b, a = before.stripped, after.stripped
    shares_before, shares_after = b.value_counts(normalize=True), a.value_counts(normalize=True)
    typical = float(shares_after.median()) if len(shares_after) else 0.0
    # a value under rate_rise cannot have risen by it: only the few common values are looked at one by one
    common = shares_after[(shares_after >= thresholds.rate_rise) & (shares_after >= POINT_MASS_RATIO * typical)]
    found = []
    for value, share in common.items():
        if str(value).lower() in NULL_TOKENS:
            continue
        earlier = float(shares_before.get(value, 0.0))
        if earlier < thresholds.rate_rise and _rise(earlier, float(share), (len(b), len(a)), thresholds):
            found.append(str(value))
    return sorted(found)[:5]


def _drift(before: pd.Series, after: pd.Series, thresholds: DiagnosisPolicy) -> dict[str, object]:
    b, a = plain_numbers(before).dropna(), plain_numbers(after).dropna()
    if b.nunique() < MIN_DISTINCT_FOR_DRIFT or a.empty:
        return {}
    statistic = ks_statistic(b, a)
    if statistic < thresholds.ks_drift:
        return {}
    low, high = float(b.min()), float(b.max())
    beyond = float(((a < low) | (a > high)).mean())
    return {"ks": round(statistic, 4), "beyond_approval_range": round(beyond, 4), "range": [low, high]}


def _renames(
    approval: pd.DataFrame,
    incident: pd.DataFrame,
    gone: list[str],
    new: list[str],
    thresholds: DiagnosisPolicy,
    logged: dict[str, str],
) -> list[ColumnFault]:
    faults = []
    taken: set[str] = set()
    for old in gone:
        if logged.get(old) in new and logged[old] not in taken:
            taken.add(logged[old])
            faults.append(ColumnFault("schema", old, {"renamed_to": logged[old], "source": "DataHub schema history"}))
            continue
        best: tuple[float, str] | None = None
        for candidate in new:
            if candidate in taken:
                continue
            distance = _distance(approval[old], incident[candidate], thresholds)
            if (
                distance is not None
                and distance <= thresholds.rename_max_distance
                and (best is None or distance < best[0])
            ):
                best = (distance, candidate)
        if best is not None:
            taken.add(best[1])
            faults.append(ColumnFault("schema", old, {"renamed_to": best[1], "distance": round(best[0], 4)}))
        else:
            faults.append(ColumnFault("schema", old, {"renamed_to": None}))
    return faults


def _distance(old: pd.Series, new: pd.Series, thresholds: DiagnosisPolicy) -> float | None:
    """How unlike two columns' values are: KS of the numbers, PSI of the categories, KS of the text lengths for
    free text (many distinct values); None when their kinds differ."""
    if numeric_share(old) >= thresholds.numeric_parse_rate:
        values = formatted_numbers(new)
        if values.notna().mean() < thresholds.numeric_parse_rate:
            return None
        return ks_statistic(plain_numbers(old), values)
    if numeric_share(new) >= thresholds.numeric_parse_rate:
        return None
    if _is_categorical(old, thresholds) or _is_categorical(new, thresholds):
        return psi_categorical(old, new)
    lengths = (old.astype(str).str.len().astype(float), new.astype(str).str.len().astype(float))
    return ks_statistic(*lengths)


def approval_fill(cells: pd.Series, thresholds: DiagnosisPolicy) -> str:
    """The value an invalid cell is replaced with: the approval window's median (numbers) or mode (text)."""
    valid = cells[~is_null(cells)]
    numbers = plain_numbers(valid)
    if len(valid) and numbers.notna().mean() >= thresholds.numeric_parse_rate:
        median = float(np.nanmedian(numbers.to_numpy(dtype=float)))
        return repr(int(median)) if median.is_integer() else repr(median)
    modes = valid.astype(str).mode()
    return str(modes.iloc[0]) if len(modes) else ""
