"""Events of the detection phase: an evaluation arrives, the gate decides."""

from __future__ import annotations

from pydantic import Field

from contracts.common import Frozen, IncidentState, WorkspaceRefs


class EvaluationReported(Frozen):
    """A model CI run reports the metrics of a base and a candidate commit."""

    run_id: str = Field(min_length=1, max_length=128, description="CI run and attempt; a retry is a new run")
    workspace: WorkspaceRefs
    baseline_metrics: dict[str, float]
    candidate_metrics: dict[str, float]
    evaluation_command: list[str]


class RegressionDetected(IncidentState):
    """The gate failed: the candidate is worse than the baseline by more than the tolerance."""


class EvaluationPassed(IncidentState):
    """The gate passed."""
