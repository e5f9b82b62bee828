"""Events of the detection phase: an evaluation arrives, the gate decides."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from contracts.common import Frozen, IncidentState, PolicyRef, WorkspaceRefs


class ClaimedMetrics(Frozen):
    """The figures a model's CI says its own evaluation measured: the base revision on the approval window
    (``baseline``) and the candidate on the incident window (``candidate``), the same metrics for both."""

    baseline: dict[str, float] = Field(min_length=1)
    candidate: dict[str, float] = Field(min_length=1)

    @model_validator(mode="after")
    def _same_metrics(self) -> ClaimedMetrics:
        if set(self.baseline) != set(self.candidate):
            only = sorted(set(self.baseline) ^ set(self.candidate))
            raise ValueError(f"the baseline and the candidate claim different metrics: {', '.join(only)}")
        return self


class EvaluationReported(Frozen):
    """A model CI run reports a base and a candidate commit, their data windows, and what it claims they measure.

    2.0 (from 1.x, ``contracts/upcasting.py``): ``claimed`` replaces ``baseline_metrics`` and
    ``candidate_metrics``. A workspace that declares ``predict`` claims nothing (the detector's referee computes
    both figures), one that only self-reports claims both; 1.x said "nothing" with two empty maps, which every
    reader had to know, and accepted one empty map beside one filled, which the gate then failed on."""

    run_id: str = Field(min_length=1, max_length=128, description="CI run and attempt; a retry is a new run")
    workspace: WorkspaceRefs
    claimed: ClaimedMetrics | None = Field(
        default=None, description="the CI's own figures; none when the workspace declares predict (the referee)"
    )
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
