"""Events of the detection phase: an evaluation arrives, the gate decides."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts.common import Frozen, IncidentState, PolicyRef, WorkspaceRefs


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


class EnvironmentFailed(Frozen):
    """The Python environment a revision declares (``uv.lock`` with ``pyproject.toml``, or ``requirements.txt``)
    could not be built, or its declaration was refused, so the referee could not evaluate it: the incident ends
    here, outcome ``environment_failed``, with the resolver's message (docs/workspace-environments.md)."""

    run_id: str = Field(min_length=1, max_length=128)
    workspace: WorkspaceRefs
    policy: PolicyRef
    revision: Literal["base", "candidate"] = Field(description="the revision whose environment failed first")
    declaration: str = Field(max_length=200, description="its declaration files; empty when none could be read")
    digest: str = Field(
        default="", pattern=r"^([0-9a-f]{64})?$", description="the environment's digest, when it got that far"
    )
    reason: str = Field(min_length=1, max_length=2000)
    resolver_message: str = Field(default="", max_length=4000, description="uv's message, trimmed, credentials out")
