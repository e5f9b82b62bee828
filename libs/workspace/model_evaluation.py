"""Evaluate one revision on one data window the way its workspace allows: with ``predict`` ModelGuard is the
referee and computes the metric from the labels it kept back; with ``evaluate`` only, the workspace reports
its own metric, and the result says so."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from libs.policy.model_policy import GatePolicy, WorkspacePolicy
from libs.referee.held_out import HeldOutError
from libs.referee.metrics import MetricUndefined
from libs.workspace.commands import WorkspaceCommandFailed, evaluate, predict
from libs.workspace.data_windows import DataWindow
from libs.workspace.runner import CommandResult
from libs.workspace.scored_rows import ScoredRows

MetricSource = Literal["referee", "self_reported"]


@dataclass(frozen=True)
class ModelEvaluation:
    metrics: dict[str, float]
    source: MetricSource
    command: CommandResult
    scored: ScoredRows | None = None
    """The rows, labels and predictions behind a referee's metric (None when self-reported)."""

    @property
    def seconds(self) -> float:
        return self.command.duration_s


def evaluate_model(tree: Path, window: DataWindow, workspace: WorkspacePolicy, gate: GatePolicy) -> ModelEvaluation:
    """Raises WorkspaceCommandFailed (or CommandTimedOut) when the command or its output fails the contract."""
    spec = workspace.command_spec()
    if workspace.predict is None:
        result = evaluate(tree, window, spec, allowed_metrics={gate.metric, *workspace.reported_metrics})
        return ModelEvaluation(result.metrics, "self_reported", result.command)
    run = predict(tree, window, spec, workspace.label)
    try:
        metrics = run.scored.metrics(gate)
    except (MetricUndefined, HeldOutError) as error:
        raise WorkspaceCommandFailed("predict", str(error), run.command) from error
    return ModelEvaluation(metrics, "referee", run.command, run.scored)
