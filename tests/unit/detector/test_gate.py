"""The gate decides on numbers alone, in both directions, at the tolerance boundary."""

from __future__ import annotations

import pytest

from libs.policy.model_policy import GatePolicy
from services.detector.gate import MetricMissing, apply_gate

HIGHER = GatePolicy(metric="f1", direction="higher_is_better", tolerance=0.02)
LOWER = GatePolicy(metric="log_loss", direction="lower_is_better", tolerance=0.05)


@pytest.mark.parametrize(
    ("gate", "baseline", "candidate", "regressed"),
    [
        (HIGHER, 0.80, 0.70, True),
        (HIGHER, 0.80, 0.79, False),
        (HIGHER, 0.80, 0.90, False),
        (LOWER, 0.30, 0.40, True),
        (LOWER, 0.30, 0.20, False),
    ],
)
def test_gate_verdicts(gate: GatePolicy, baseline: float, candidate: float, regressed: bool) -> None:
    result = apply_gate(gate, {gate.metric: baseline}, {gate.metric: candidate})
    assert result.regressed is regressed
    assert result.delta == pytest.approx(candidate - baseline)


def test_missing_metric_is_an_error_not_a_pass() -> None:
    with pytest.raises(MetricMissing):
        apply_gate(HIGHER, {"accuracy": 0.9}, {"f1": 0.5})
