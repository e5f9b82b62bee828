"""The metrics the referee computes from predictions and held-back labels, as scikit-learn defines them.

The classification metrics are computed by ``libs/referee/binary_metrics.py`` (scikit-learn's definitions, without
its per-call validation and sorting: 10-15 ms per evaluation before) for labels of 0 and 1, finite values and
non-negative weights not all zero, which is every input the referee makes; anything else is handed to scikit-learn
itself.

Every metric knows its direction and what a prediction means for it: a score of the positive class (ranking
metrics), a probability (log loss), a score compared with the gate's threshold (label metrics) or a value
(regression). Optional row weights let the diagnosis re-score the same predictions under another label mix.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from sklearn import metrics as sk

from libs.referee.binary_metrics import LabelCounts, RankedCurve, plain_binary
from libs.referee.binary_metrics import log_loss as binary_log_loss

Direction = Literal["higher_is_better", "lower_is_better"]
Task = Literal["classification", "regression"]
Reading = Literal["label", "score", "probability", "value"]
Weights = np.ndarray | None


class MetricUndefined(ValueError):
    """The metric cannot be computed on these rows (one class only, a probability outside [0, 1], ...)."""


@dataclass(frozen=True)
class RefereeMetric:
    name: str
    task: Task
    direction: Direction
    reading: Reading
    compute: Callable[[np.ndarray, np.ndarray, Weights], float]


def _labels(threshold: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda scores: (scores >= threshold).astype(int)


def _two_classes(y_true: np.ndarray, name: str) -> None:
    if len(np.unique(y_true)) < 2:
        raise MetricUndefined(f"{name} is undefined: the evaluation rows hold one class only")


def _ranked(y_true: np.ndarray, scores: np.ndarray, weights: Weights) -> RankedCurve | None:
    """The ranking of these rows when the fast path computes it as scikit-learn would, else None."""
    if not plain_binary(y_true, scores, weights):
        return None
    curve = RankedCurve.of(y_true, scores, weights)
    return curve if curve.both_classes else None


def _auc(y_true: np.ndarray, scores: np.ndarray, weights: Weights) -> float:
    _two_classes(y_true, "roc_auc")
    curve = _ranked(y_true, scores, weights)
    if curve is None:
        return float(sk.roc_auc_score(y_true, scores, sample_weight=weights))
    return curve.roc_auc()


def _average_precision(y_true: np.ndarray, scores: np.ndarray, weights: Weights) -> float:
    _two_classes(y_true, "average_precision")
    curve = _ranked(y_true, scores, weights)
    if curve is None:
        return float(sk.average_precision_score(y_true, scores, sample_weight=weights))
    return curve.average_precision()


def _log_loss(y_true: np.ndarray, probabilities: np.ndarray, weights: Weights) -> float:
    if probabilities.min() < 0 or probabilities.max() > 1:
        raise MetricUndefined("log_loss needs probabilities in [0, 1]; a prediction lies outside")
    clipped = np.clip(probabilities, 1e-15, 1 - 1e-15)
    if plain_binary(y_true, clipped, weights):
        return binary_log_loss(y_true, clipped, weights)
    return float(sk.log_loss(y_true, clipped, sample_weight=weights, labels=[0, 1]))


def _mape(y_true: np.ndarray, values: np.ndarray, weights: Weights) -> float:
    if np.any(y_true == 0):
        raise MetricUndefined("mape is undefined: a label is 0")
    return float(sk.mean_absolute_percentage_error(y_true, values, sample_weight=weights))


def _label_metric(name: str) -> Callable[[np.ndarray, np.ndarray, Weights], float]:
    scorer = {
        "f1": sk.f1_score,
        "precision": sk.precision_score,
        "recall": sk.recall_score,
    }[name]

    def compute(y: np.ndarray, predicted: np.ndarray, w: Weights) -> float:
        if plain_binary(y, predicted, w):
            counts = LabelCounts.of(y, predicted, w)
            return {"f1": counts.f1, "precision": counts.precision, "recall": counts.recall}[name]()
        return float(scorer(y, predicted, sample_weight=w, zero_division=0))

    return compute


def _accuracy(y: np.ndarray, predicted: np.ndarray, w: Weights) -> float:
    if plain_binary(y, predicted, w):
        return LabelCounts.of(y, predicted, w).accuracy()
    return float(sk.accuracy_score(y, predicted, sample_weight=w))


METRICS: dict[str, RefereeMetric] = {
    metric.name: metric
    for metric in (
        RefereeMetric("f1", "classification", "higher_is_better", "label", _label_metric("f1")),
        RefereeMetric("precision", "classification", "higher_is_better", "label", _label_metric("precision")),
        RefereeMetric("recall", "classification", "higher_is_better", "label", _label_metric("recall")),
        RefereeMetric("accuracy", "classification", "higher_is_better", "label", _accuracy),
        RefereeMetric("roc_auc", "classification", "higher_is_better", "score", _auc),
        RefereeMetric("average_precision", "classification", "higher_is_better", "score", _average_precision),
        RefereeMetric("gini", "classification", "higher_is_better", "score", lambda y, s, w: 2 * _auc(y, s, w) - 1),
        RefereeMetric("log_loss", "classification", "lower_is_better", "probability", _log_loss),
        RefereeMetric(
            "rmse",
            "regression",
            "lower_is_better",
            "value",
            lambda y, v, w: math.sqrt(float(sk.mean_squared_error(y, v, sample_weight=w))),
        ),
        RefereeMetric(
            "mae",
            "regression",
            "lower_is_better",
            "value",
            lambda y, v, w: float(sk.mean_absolute_error(y, v, sample_weight=w)),
        ),
        RefereeMetric("mape", "regression", "lower_is_better", "value", _mape),
        RefereeMetric(
            "r2", "regression", "higher_is_better", "value", lambda y, v, w: float(sk.r2_score(y, v, sample_weight=w))
        ),
    )
}
"""Every metric the referee can compute, by name."""

FAMILY: dict[Task, tuple[str, ...]] = {
    "classification": ("f1", "precision", "recall", "accuracy", "roc_auc", "average_precision", "gini", "log_loss"),
    "regression": ("rmse", "mae", "mape", "r2"),
}
DECIMALS = 6


def referee_metric(name: str) -> RefereeMetric:
    try:
        return METRICS[name]
    except KeyError:
        raise MetricUndefined(
            f"the referee computes no metric {name!r}; it computes {', '.join(sorted(METRICS))}"
        ) from None


def gate_problem(name: str, direction: str) -> str | None:
    """Why a gate on ``name`` in ``direction`` cannot be refereed, or None when it can."""
    metric = METRICS.get(name)
    if metric is None:
        return f"the referee computes no metric {name!r}; it computes {', '.join(sorted(METRICS))}"
    if metric.direction != direction:
        return f"{name} is {metric.direction.replace('_', ' ')}, the gate says {direction.replace('_', ' ')}"
    return None


def score(
    name: str,
    y_true: np.ndarray,
    predictions: np.ndarray,
    *,
    threshold: float,
    weights: Sequence[float] | np.ndarray | None = None,
) -> float:
    """``name`` of ``predictions`` against ``y_true`` (0/1 for classification, numbers for regression)."""
    metric = referee_metric(name)
    values = _labels(threshold)(predictions) if metric.reading == "label" else predictions
    w = None if weights is None else np.asarray(weights, dtype=float)
    return round(metric.compute(y_true, values, w), DECIMALS)


def family_scores(
    gate_metric: str, y_true: np.ndarray, predictions: np.ndarray, *, threshold: float
) -> dict[str, float]:
    """The gate metric and every other metric of its task that is defined on these predictions."""
    task = referee_metric(gate_metric).task
    found = {gate_metric: score(gate_metric, y_true, predictions, threshold=threshold)}
    for name in FAMILY[task]:
        if name in found:
            continue
        try:
            found[name] = score(name, y_true, predictions, threshold=threshold)
        except MetricUndefined:
            continue
    return found
