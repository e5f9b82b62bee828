"""The referee's metrics agree with scikit-learn's own, know their direction, and refuse what is undefined."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import metrics as sk

from libs.referee.metrics import METRICS, MetricUndefined, family_scores, gate_problem, score

Y = np.array([0, 0, 1, 1, 0, 1, 0, 1, 1, 0])
P = np.array([0.1, 0.6, 0.8, 0.4, 0.2, 0.9, 0.3, 0.7, 0.55, 0.45])
VALUES = np.array([10.0, 12.0, 9.0, 20.0, 15.0])
TRUTH = np.array([11.0, 12.5, 8.0, 18.0, 16.0])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("f1", sk.f1_score(Y, (P >= 0.5).astype(int))),
        ("precision", sk.precision_score(Y, (P >= 0.5).astype(int))),
        ("recall", sk.recall_score(Y, (P >= 0.5).astype(int))),
        ("accuracy", sk.accuracy_score(Y, (P >= 0.5).astype(int))),
        ("roc_auc", sk.roc_auc_score(Y, P)),
        ("average_precision", sk.average_precision_score(Y, P)),
        ("gini", 2 * sk.roc_auc_score(Y, P) - 1),
        ("log_loss", sk.log_loss(Y, P)),
    ],
)
def test_classification_metrics_match_scikit_learn(name: str, expected: float) -> None:
    assert score(name, Y, P, threshold=0.5) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("rmse", math.sqrt(sk.mean_squared_error(TRUTH, VALUES))),
        ("mae", sk.mean_absolute_error(TRUTH, VALUES)),
        ("mape", sk.mean_absolute_percentage_error(TRUTH, VALUES)),
        ("r2", sk.r2_score(TRUTH, VALUES)),
    ],
)
def test_regression_metrics_match_scikit_learn(name: str, expected: float) -> None:
    assert score(name, TRUTH, VALUES, threshold=0.5) == pytest.approx(expected, abs=1e-6)


def test_the_threshold_decides_the_positive_class_for_label_metrics() -> None:
    assert score("f1", Y, P, threshold=0.5) != score("f1", Y, P, threshold=0.75)
    assert score("roc_auc", Y, P, threshold=0.5) == score("roc_auc", Y, P, threshold=0.75)


def test_weights_rescore_the_same_predictions() -> None:
    weights = np.where(Y == 1, 0.25, 1.0)
    assert score("f1", Y, P, threshold=0.5, weights=weights) == pytest.approx(
        sk.f1_score(Y, (P >= 0.5).astype(int), sample_weight=weights), abs=1e-6
    )


def test_what_is_undefined_is_refused_not_guessed() -> None:
    with pytest.raises(MetricUndefined, match="one class"):
        score("roc_auc", np.zeros(4, dtype=int), np.array([0.1, 0.2, 0.3, 0.4]), threshold=0.5)
    with pytest.raises(MetricUndefined, match=r"\[0, 1\]"):
        score("log_loss", Y, P * 3, threshold=0.5)
    with pytest.raises(MetricUndefined, match="a label is 0"):
        score("mape", np.array([0.0, 1.0]), np.array([1.0, 1.0]), threshold=0.5)
    with pytest.raises(MetricUndefined, match="no metric 'bogus'"):
        score("bogus", Y, P, threshold=0.5)


def test_every_metric_has_a_direction_a_gate_must_match() -> None:
    assert gate_problem("rmse", "lower_is_better") is None
    assert "lower is better" in (gate_problem("rmse", "higher_is_better") or "")
    assert "no metric" in (gate_problem("kappa", "higher_is_better") or "")
    assert {metric.direction for metric in METRICS.values()} == {"higher_is_better", "lower_is_better"}


def test_the_family_holds_the_defined_metrics_of_the_gate_task() -> None:
    found = family_scores("rmse", np.array([0.0, 1.0, 2.0]), np.array([0.5, 1.0, 2.5]), threshold=0.5)
    assert set(found) == {"rmse", "mae", "r2"}  # mape is undefined with a zero label
