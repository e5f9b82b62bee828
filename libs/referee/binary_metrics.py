"""The binary-classification metrics, computed the way scikit-learn defines them, from one weighted count of the
labels and one descending sort of the scores.

Each scikit-learn metric validates its inputs again and sorts again: eight metrics of one evaluation took 10-15 ms,
and the referee scores every evaluation it runs (two per detection, more in a diagnosis). Here the same definitions
take a fraction of a millisecond. They follow scikit-learn 1.9 step by step (``_binary_clf_curve``, ``roc_curve``
with ``drop_intermediate``, ``precision_recall_curve``, ``zero_division=0``), and
``tests/unit/referee/test_binary_metrics.py`` checks them against it on generated rows with ties, weights, rare
classes and every threshold.

Only inputs the fast path is certain of come here: labels of 0 and 1, finite numbers, weights that are finite, not
negative and not all zero. ``libs/referee/metrics.py`` hands anything else to scikit-learn itself, so its errors
stay its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Weights = np.ndarray | None


def plain_binary(y_true: np.ndarray, values: np.ndarray, weights: Weights) -> bool:
    """Whether these rows are ones the fast path computes exactly as scikit-learn does."""
    if y_true.ndim != 1 or values.ndim != 1 or len(y_true) != len(values) or len(y_true) == 0:
        return False
    if not np.all((y_true == 0) | (y_true == 1)) or not np.all(np.isfinite(values)):
        return False
    if weights is None:
        return True
    return (
        weights.shape == y_true.shape
        and bool(np.all(np.isfinite(weights)))
        and bool(np.all(weights >= 0))
        and float(weights.sum()) > 0
    )


@dataclass(frozen=True)
class LabelCounts:
    """Weighted counts of the predicted labels against the true ones (the positive class is 1)."""

    tp: float
    fp: float
    fn: float
    correct: float
    total: float

    @classmethod
    def of(cls, y_true: np.ndarray, predicted: np.ndarray, weights: Weights) -> LabelCounts:
        w = np.ones(len(y_true)) if weights is None else weights.astype(float)
        true, hit = y_true == 1, predicted == 1
        return cls(
            tp=float(w[true & hit].sum()),
            fp=float(w[~true & hit].sum()),
            fn=float(w[true & ~hit].sum()),
            correct=float(w[y_true == predicted].sum()),
            total=float(w.sum()),
        )

    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp > 0 else 0.0

    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn > 0 else 0.0

    def f1(self) -> float:
        denominator = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / denominator if denominator > 0 else 0.0

    def accuracy(self) -> float:
        return self.correct / self.total


@dataclass(frozen=True)
class RankedCurve:
    """Cumulative weighted true and false positives at each distinct score, highest score first
    (scikit-learn's ``_binary_clf_curve``)."""

    tps: np.ndarray
    fps: np.ndarray

    @classmethod
    def of(cls, y_true: np.ndarray, scores: np.ndarray, weights: Weights) -> RankedCurve:
        positive = (y_true == 1).astype(np.float64)
        if weights is not None:  # rows of weight 0 are left out, as scikit-learn does
            kept = weights != 0
            positive, scores, weights = positive[kept], scores[kept], weights[kept]
        order = np.argsort(-scores, kind="stable")  # highest first, ties in their row order
        ranked, positive = scores[order], positive[order]
        last_of_each = np.r_[np.nonzero(np.diff(ranked))[0], positive.size - 1]
        if weights is None:
            tps = np.cumsum(positive, dtype=np.float64)[last_of_each]
            return cls(tps, 1 + last_of_each.astype(np.float64) - tps)
        weight = weights[order]
        tps = np.cumsum(positive * weight, dtype=np.float64)[last_of_each]
        fps = np.cumsum((1 - positive) * weight, dtype=np.float64)[last_of_each]
        return cls(tps, fps)

    @property
    def both_classes(self) -> bool:
        """Both classes have weight here (else scikit-learn warns and answers nan: the caller asks it instead)."""
        return bool(self.tps.size) and self.tps[-1] > 0 and self.fps[-1] > 0

    def roc_auc(self) -> float:
        """The area under the ROC curve, its collinear points dropped first as ``roc_curve`` does."""
        tps, fps = self.tps, self.fps
        if fps.shape[0] > 2:
            kept = np.nonzero(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])[0]
            tps, fps = tps[kept], fps[kept]
        tps, fps = np.r_[0.0, tps], np.r_[0.0, fps]
        return float(np.trapezoid(tps / tps[-1], fps / fps[-1]))

    def average_precision(self) -> float:
        """The precision at each threshold weighted by the recall it adds (``average_precision_score``), summed from
        the lowest threshold up as scikit-learn sums it."""
        predicted = self.tps + self.fps
        precision = np.divide(self.tps, predicted, out=np.zeros_like(self.tps), where=predicted != 0)
        recall = self.tps / self.tps[-1]
        precision, recall = np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0]
        return float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))


def log_loss(y_true: np.ndarray, probabilities: np.ndarray, weights: Weights) -> float:
    """The mean negative log-likelihood of the true labels; ``probabilities`` already clipped inside (0, 1)."""
    losses = -np.where(y_true == 1, np.log(probabilities), np.log(1 - probabilities))
    return float(np.average(losses, weights=weights))
