"""The incident window's rows brought to the approval window's label mix: weights per row (class shares, or
the shares of the approval labels' deciles for a numeric label), and a seeded resample by those weights."""

from __future__ import annotations

import numpy as np
import pandas as pd

from libs.referee.held_out import normalised_label
from libs.referee.metrics import Task

DECILES = 10
SEED = 20240917


def label_groups(reference: pd.Series, current: pd.Series, task: Task) -> tuple[np.ndarray, np.ndarray] | None:
    """Both label columns as numbers: class codes (labels compared as the referee compares them) or values;
    None when a numeric label does not parse or a side has no rows."""
    if not len(reference) or not len(current):
        return None
    if task == "regression":
        try:
            return reference.astype(float).to_numpy(), current.astype(float).to_numpy()
        except ValueError:
            return None
    keys = (
        [normalised_label(text) for text in reference.astype(str)],
        [normalised_label(t) for t in current.astype(str)],
    )
    codes = {key: index for index, key in enumerate(sorted(set(keys[0]) | set(keys[1])))}
    return np.array([codes[k] for k in keys[0]]), np.array([codes[k] for k in keys[1]])


def grouped_like(reference: np.ndarray, current: np.ndarray, task: Task) -> tuple[np.ndarray, np.ndarray]:
    """Each row's label group: its class, or the decile of the reference labels its value falls in."""
    return _groups(reference, current, task)


def _groups(reference: np.ndarray, current: np.ndarray, task: Task) -> tuple[np.ndarray, np.ndarray]:
    if task == "classification":
        return reference.astype(int), current.astype(int)
    edges = np.unique(np.quantile(reference, np.linspace(0, 1, DECILES + 1))[1:-1])
    return np.searchsorted(edges, reference), np.searchsorted(edges, current)


def mix_weights(reference: np.ndarray, current: np.ndarray, task: Task) -> np.ndarray:
    """Per row of ``current``: the share of its class (or label decile) in ``reference`` over its share in
    ``current``, so the weighted rows have the reference's label mix."""
    ref_groups, cur_groups = _groups(reference, current, task)
    weights = np.zeros(len(current))
    for group in np.unique(cur_groups):
        cur_share = float(np.mean(cur_groups == group))
        weights[cur_groups == group] = float(np.mean(ref_groups == group)) / cur_share if cur_share else 0.0
    return weights


def label_distance(reference: np.ndarray, current: np.ndarray, task: Task) -> float:
    """Total variation distance of the class shares, or of the reference deciles' shares for a numeric label."""
    ref_groups, cur_groups = _groups(reference, current, task)
    groups = np.union1d(np.unique(ref_groups), np.unique(cur_groups))
    return 0.5 * float(sum(abs(np.mean(ref_groups == g) - np.mean(cur_groups == g)) for g in groups))


def resampled(frame: pd.DataFrame, weights: np.ndarray) -> pd.DataFrame:
    """As many rows as ``frame``, drawn with replacement in proportion to ``weights`` (a fixed seed)."""
    total = float(weights.sum())
    if total <= 0:
        return frame
    rng = np.random.default_rng(SEED)
    chosen = rng.choice(len(frame), size=len(frame), replace=True, p=weights / total)
    return frame.iloc[np.sort(chosen)].reset_index(drop=True)
