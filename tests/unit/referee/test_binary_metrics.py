"""The referee's classification metrics against scikit-learn's own, computed side by side on generated rows: sizes
from one row to thousands, scores with and without ties (rounded, constant, 0/1, unbounded), rare and common
positives, no weights, fractional weights, whole weights with zeros, and weights that leave a class with nothing.
Where scikit-learn refuses, the referee refuses too."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from sklearn import metrics as sk

from libs.referee.binary_metrics import RankedCurve, plain_binary
from libs.referee.metrics import FAMILY, METRICS, MetricUndefined

CLASSIFICATION = FAMILY["classification"]


def scikit_learn(name: str, y: np.ndarray, values: np.ndarray, w: np.ndarray | None) -> float:
    """The metric as the referee computed it with scikit-learn alone (``values``: labels for the label metrics)."""
    if name in ("roc_auc", "gini", "average_precision") and len(np.unique(y)) < 2:
        raise MetricUndefined("one class")
    if name == "log_loss":
        if values.min() < 0 or values.max() > 1:
            raise MetricUndefined("[0, 1]")
        return float(sk.log_loss(y, np.clip(values, 1e-15, 1 - 1e-15), sample_weight=w, labels=[0, 1]))
    if name == "gini":
        return 2 * float(sk.roc_auc_score(y, values, sample_weight=w)) - 1
    computed: Callable[[], float] = {
        "f1": lambda: sk.f1_score(y, values, sample_weight=w, zero_division=0),
        "precision": lambda: sk.precision_score(y, values, sample_weight=w, zero_division=0),
        "recall": lambda: sk.recall_score(y, values, sample_weight=w, zero_division=0),
        "accuracy": lambda: sk.accuracy_score(y, values, sample_weight=w),
        "roc_auc": lambda: sk.roc_auc_score(y, values, sample_weight=w),
        "average_precision": lambda: sk.average_precision_score(y, values, sample_weight=w),
    }[name]
    return float(computed())


def outcome(compute: Callable[..., float], *args: object) -> float | type[BaseException]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return compute(*args)
        except (ValueError, ZeroDivisionError) as error:
            return type(error)


def generated_rows() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray | None]]:
    rng = np.random.default_rng(20261204)
    cases = []
    for size, positives, kind, weighting in itertools.product(
        (1, 2, 3, 10, 57, 400, 3000),
        (0.0, 0.03, 0.5, 1.0),
        ("uniform", "rounded", "constant", "zero-one", "unbounded"),
        ("none", "fractional", "whole", "positives-weightless"),
    ):
        y = (rng.random(size) < positives).astype(int)
        scores = {
            "uniform": rng.random(size),
            "rounded": np.round(rng.random(size), 1),
            "constant": np.full(size, 0.5),
            "zero-one": rng.integers(0, 2, size).astype(float),
            "unbounded": rng.normal(0, 3, size) + 2.0 * y,
        }[kind]
        weights = {
            "none": None,
            "fractional": rng.random(size) + 0.01,
            "whole": rng.integers(0, 4, size).astype(float),
            "positives-weightless": np.where(y == 1, 0.0, 1.0),
        }[weighting]
        cases.append((f"{size}-{positives}-{kind}-{weighting}", y, scores, weights))
    return cases


CASES = generated_rows()


@pytest.mark.parametrize("name", CLASSIFICATION)
def test_every_classification_metric_is_scikit_learns_on_generated_rows(name: str) -> None:
    metric = METRICS[name]
    compared = 0
    for case, y, scores, weights in CASES:
        for threshold in (0.5, 0.3, float(np.median(scores))):
            values = (scores >= threshold).astype(int) if metric.reading == "label" else scores
            ours = outcome(metric.compute, y, values, weights)
            theirs = outcome(scikit_learn, name, y, values, weights)
            if isinstance(theirs, type) or isinstance(ours, type):
                assert ours == theirs or (ours is MetricUndefined and theirs is MetricUndefined), (case, ours, theirs)
                continue
            if math.isnan(theirs):
                assert math.isnan(ours), (case, threshold, ours)
                continue
            assert abs(ours - theirs) <= 1e-12, (case, threshold, ours, theirs)
            if weights is None:
                assert ours == theirs, ("bit for bit without weights", case, threshold, ours, theirs)
            compared += 1
            if metric.reading != "label":
                break  # the threshold does not enter a ranking or a probability
    assert compared > 100


def test_only_rows_the_fast_path_is_certain_of_take_it() -> None:
    y, scores = np.array([0, 1, 1, 0]), np.array([0.1, 0.9, 0.4, 0.3])
    assert plain_binary(y, scores, None) and plain_binary(y, scores, np.ones(4))
    assert not plain_binary(np.array([0, 2, 1, 0]), scores, None), "a label other than 0 and 1"
    assert not plain_binary(y, np.array([0.1, np.nan, 0.4, 0.3]), None)
    assert not plain_binary(y, scores, np.array([1.0, -1.0, 1.0, 1.0]))
    assert not plain_binary(y, scores, np.array([1.0, np.inf, 1.0, 1.0]))
    assert not plain_binary(y, scores, np.zeros(4)), "scikit-learn refuses weights that are all zero"
    assert not plain_binary(y, scores, np.ones(3)) and not plain_binary(y[:0], scores[:0], None)
    assert not RankedCurve.of(y, scores, np.array([1.0, 0.0, 0.0, 1.0])).both_classes


def test_labels_outside_0_and_1_are_refused_as_scikit_learn_refuses_them() -> None:
    y, scores = np.array([0, 2, 1, 0]), np.array([0.1, 0.9, 0.4, 0.3])
    for name in ("f1", "roc_auc", "average_precision", "log_loss"):
        metric = METRICS[name]
        values = (scores >= 0.5).astype(int) if metric.reading == "label" else scores
        assert outcome(metric.compute, y, values, None) is ValueError
