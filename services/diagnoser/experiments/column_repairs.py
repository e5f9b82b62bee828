"""Undo a column fault in a raw text frame, cell by cell, with what the approval window says a value should
look like; or find the rows that carry it. Cells a fault does not touch keep their text exactly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.experiments.column_faults import ColumnFault, approval_fill, invalid_mask
from services.diagnoser.profiling.numbers import formatted_numbers, plain_numbers


def repaired_frame(
    frame: pd.DataFrame,
    faults: Sequence[ColumnFault],
    approval: pd.DataFrame,
    incident: pd.DataFrame,
    thresholds: DiagnosisPolicy,
    declared: Mapping[str, object] | None = None,
) -> pd.DataFrame:
    """``frame`` (one incident file) with ``faults`` undone; ``approval`` and ``incident`` are each window's
    rows (train and eval together), the reference and the population a value is ranked in. ``declared``: the
    workspace config's ``null_fills`` and ``categorical_defaults`` (what a person said a missing value or an
    unseen category means), used instead of the approval window's median or mode where given."""
    declared = declared or {}
    repaired = frame.copy()
    for fault in faults:
        name = fault.column
        if fault.kind == "schema":
            source = fault.renamed_to
            if source is not None and source in repaired.columns and name not in repaired.columns:
                repaired = repaired.rename(columns={source: name})
            continue
        if name not in repaired.columns:
            continue
        cells = repaired[name]
        if fault.kind == "type":
            numbers = formatted_numbers(cells)
            repaired[name] = cells.where(numbers.isna(), numbers.map(_number_text))
        elif fault.kind == "category":
            unseen = set(fault.unseen)
            mode = str(declared[name]) if name in declared else approval_fill(approval[name], thresholds)
            repaired[name] = cells.where(~cells.astype(str).isin(unseen), mode)
        elif fault.kind == "quality":
            fill = str(declared[name]) if name in declared else approval_fill(approval[name], thresholds)
            repaired[name] = cells.where(~invalid_mask(cells, fault), fill)
        elif fault.kind == "drift":
            repaired[name] = _quantile_mapped(cells, approval[name], incident[name])
    return repaired


def fault_rows(frame: pd.DataFrame, faults: Sequence[ColumnFault]) -> pd.Series | None:
    """Rows that carry any of ``faults``; None when a fault is in every row (a rename, a retyped column)."""
    rows = pd.Series(False, index=frame.index)
    for fault in faults:
        if fault.kind in ("schema", "type"):
            return None
        if fault.column not in frame.columns:
            continue
        cells = frame[fault.column]
        if fault.kind == "category":
            rows |= cells.astype(str).isin(set(fault.unseen))
        elif fault.kind == "quality":
            rows |= invalid_mask(cells, fault)
        elif fault.kind == "drift" and (bounds := fault.value_range) is not None:
            low, high = bounds
            numbers = plain_numbers(cells)
            rows |= (numbers < low) | (numbers > high)
    return rows


def _quantile_mapped(cells: pd.Series, approval: pd.Series, incident: pd.Series) -> pd.Series:
    """Each number moved to the approval quantile of its rank among the incident window's numbers."""
    reference = np.sort(plain_numbers(approval).dropna().to_numpy(dtype=float))
    population = np.sort(plain_numbers(incident).dropna().to_numpy(dtype=float))
    numbers = plain_numbers(cells)
    if reference.size == 0 or population.size == 0:
        return cells
    present = numbers.notna()
    values = numbers[present].to_numpy(dtype=float)
    ranks = (np.searchsorted(population, values, side="left") + np.searchsorted(population, values, side="right")) / (
        2 * population.size
    )
    mapped = np.quantile(reference, np.clip(ranks, 0.0, 1.0))
    out = cells.copy()
    out[present] = [_number_text(value) for value in mapped]
    return out


def _number_text(value: float) -> str:
    return repr(int(value)) if float(value).is_integer() else repr(round(float(value), 6))
