"""Counterfactual attribution: the four runs split the drop between the code and the data."""

from __future__ import annotations

import pytest

from services.diagnoser.extractors.counterfactual import counterfactual_evidence
from services.diagnoser.inputs import CounterfactualMetrics, GateSpec

F1 = GateSpec(metric="f1", direction="higher_is_better", tolerance=0.02)
RMSE = GateSpec(metric="rmse", direction="lower_is_better", tolerance=0.1)


def metrics(ba: float | None, bi: float | None, ca: float | None, ci: float | None) -> CounterfactualMetrics:
    return CounterfactualMetrics(
        base_on_approval=ba, base_on_incident=bi, candidate_on_approval=ca, candidate_on_incident=ci
    )


def test_a_drop_that_follows_the_code_on_both_windows() -> None:
    values = counterfactual_evidence(metrics(0.80, 0.80, 0.70, 0.70), F1).values
    assert values["drop"] == pytest.approx(0.10)
    assert values["code_effect"] == pytest.approx(0.10) and values["data_effect"] == pytest.approx(0.0)
    assert (values["code_share"], values["data_share"]) == (1.0, 0.0)
    assert values["regressed"] is True


def test_a_drop_that_follows_the_data_under_both_revisions() -> None:
    values = counterfactual_evidence(metrics(0.80, 0.60, 0.80, 0.60), F1).values
    assert (values["code_share"], values["data_share"]) == (0.0, 1.0)
    assert values["data_effect_share"] == 1.0 and values["interaction"] == pytest.approx(0.0)


def test_a_candidate_that_breaks_only_on_new_data_is_charged_with_the_break() -> None:
    values = counterfactual_evidence(metrics(0.80, 0.80, 0.80, 0.60), F1).values
    # Shapley halves split it; the interaction goes to the code because the base handled the same data
    assert values["code_effect_share"] == 0.5 and values["data_effect_share"] == 0.5
    assert values["interaction"] == pytest.approx(0.2)
    assert (values["code_share"], values["data_share"]) == (1.0, 0.0)


def test_both_sides_contribute() -> None:
    values = counterfactual_evidence(metrics(0.80, 0.70, 0.70, 0.60), F1).values
    assert values["code_share"] == 0.5 and values["data_share"] == 0.5


def test_lower_is_better_metrics_are_turned_so_a_drop_is_positive() -> None:
    values = counterfactual_evidence(metrics(1.0, 1.0, 1.5, 1.5), RMSE).values
    assert values["drop"] == pytest.approx(0.5) and values["code_share"] == 1.0


def test_within_tolerance_is_no_regression() -> None:
    item = counterfactual_evidence(metrics(0.80, 0.80, 0.79, 0.79), F1)
    assert item.values["regressed"] is False and item.strength == 0.0


def test_a_missing_run_makes_it_unavailable() -> None:
    item = counterfactual_evidence(metrics(0.80, None, 0.70, 0.70), F1)
    assert item.values["available"] is False and item.values["missing"] == ["base_on_incident"]
    assert item.strength == 0.0 and item.method


def test_a_window_difference_within_the_tolerance_is_noise_not_a_cause() -> None:
    """The approved code loses 0.022 to the new window (about the tolerance): the drop still follows the code."""
    values = counterfactual_evidence(metrics(0.9051, 0.8832, 0.8358, 0.8209), F1).values
    assert values["data_share"] == pytest.approx(0.26, abs=0.01)  # the raw split
    assert values["code_attribution"] == pytest.approx(0.9572, abs=1e-3)  # 0.0423 / (0.0423 + 0.0019)
    assert values["data_attribution"] == pytest.approx(0.0428, abs=1e-3)


def test_two_causes_beyond_the_noise_stay_mixed() -> None:
    values = counterfactual_evidence(metrics(0.80, 0.74, 0.74, 0.68), F1).values
    assert values["code_attribution"] == pytest.approx(0.5) and values["data_attribution"] == pytest.approx(0.5)
