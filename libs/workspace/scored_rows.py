"""One window's evaluation rows as the referee holds them: the labels kept back and the workspace's predictions,
row by row, so a metric can be computed, and recomputed under other row weights, without running anything."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from libs.policy.model_policy import GatePolicy
from libs.referee.held_out import HeldLabels
from libs.referee.metrics import family_scores, referee_metric, score


@dataclass(frozen=True, eq=False)
class ScoredRows:
    labels: HeldLabels
    predictions: np.ndarray

    def targets(self, gate: GatePolicy) -> np.ndarray:
        return self.labels.as_targets(referee_metric(gate.metric).task, gate.positive_label)

    def metrics(self, gate: GatePolicy) -> dict[str, float]:
        """The gate metric and the other metrics of its task that are defined here."""
        return family_scores(gate.metric, self.targets(gate), self.predictions, threshold=gate.threshold)

    def gate_metric(self, gate: GatePolicy, weights: Sequence[float] | np.ndarray | None = None) -> float:
        return score(gate.metric, self.targets(gate), self.predictions, threshold=gate.threshold, weights=weights)
