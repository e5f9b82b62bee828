"""Metrics turned into losses (higher is worse), so shares of a drop read the same in both directions."""

from __future__ import annotations

from services.diagnoser.inputs import GateSpec


def loss(gate: GateSpec, metric: float) -> float:
    return metric if gate.direction == "lower_is_better" else -metric


def share(part: float, whole: float) -> float | None:
    """``part`` as a share of ``whole``; None when ``whole`` is no loss at all."""
    return round(part / whole, 4) if whole > 0 else None
