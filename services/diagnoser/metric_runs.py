"""The four counterfactual evaluations: each revision on each data window, computed by running the
workspace's own evaluation. A pair whose evaluation cannot run is None, and the reason is kept."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from libs.policy import GatePolicy, WorkspacePolicy
from libs.workspace.commands import WorkspaceCommandFailed, evaluate
from libs.workspace.data_windows import DataWindow
from libs.workspace.runner import CommandTimedOut
from services.diagnoser.inputs import CounterfactualMetrics

EVALUATION_ERRORS = (WorkspaceCommandFailed, CommandTimedOut, OSError, ValueError)


@dataclass(frozen=True)
class MetricRuns:
    metrics: CounterfactualMetrics
    failures: dict[str, str]


def run_counterfactual_metrics(
    base: Path,
    candidate: Path,
    approval: DataWindow,
    incident: DataWindow,
    workspace: WorkspacePolicy,
    gate: GatePolicy,
) -> MetricRuns:
    spec = workspace.command_spec()
    scratch = str(Path(base).parent)
    values: dict[str, float | None] = {}
    failures: dict[str, str] = {}
    for label, tree, window in (
        ("base_on_approval", base, approval),
        ("base_on_incident", base, incident),
        ("candidate_on_approval", candidate, approval),
        ("candidate_on_incident", candidate, incident),
    ):
        try:
            metrics = evaluate(tree, window, spec).metrics
        except EVALUATION_ERRORS as exc:  # the end of the message holds the error; scratch paths out
            message = " ".join(str(exc).replace(scratch, "<workspace>").split())
            values[label], failures[label] = None, message[-500:]
            continue
        if gate.metric not in metrics:
            values[label], failures[label] = None, f"the evaluation printed no {gate.metric!r} metric"
            continue
        values[label] = metrics[gate.metric]
    return MetricRuns(CounterfactualMetrics(**values, failures=failures), failures)
