"""The deterministic quality gate: a number and a tolerance decide, nothing else."""

from __future__ import annotations

from typing import Literal

from contracts.common import GateResult
from libs.policy.model_policy import GatePolicy


class MetricMissing(ValueError):
    pass


def apply_gate(
    gate: GatePolicy,
    baseline: dict[str, float],
    candidate: dict[str, float],
    *,
    source: Literal["referee", "self_reported"] = "self_reported",
    claimed: tuple[dict[str, float], dict[str, float]] | None = None,
) -> GateResult:
    """``claimed``: what the CI reported, when ``baseline`` and ``candidate`` are the referee's own figures."""
    if gate.metric not in baseline or gate.metric not in candidate:
        raise MetricMissing(f"metric {gate.metric!r} is missing from the baseline or the candidate")
    base, cand = float(baseline[gate.metric]), float(candidate[gate.metric])
    delta = cand - base
    worsening = -delta if gate.direction == "higher_is_better" else delta
    return GateResult(
        metric=gate.metric,
        direction=gate.direction,
        tolerance=gate.tolerance,
        baseline=base,
        candidate=cand,
        delta=delta,
        regressed=worsening > gate.tolerance,
        metric_source=source,
        claimed_baseline=claimed[0].get(gate.metric) if claimed else None,
        claimed_candidate=claimed[1].get(gate.metric) if claimed else None,
    )
