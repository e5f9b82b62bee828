"""Detector: an evaluation in, a regression or a pass out, decided by the model's policy gate.

When the model's workspace declares ``predict``, the detector does not read the CI's figures: the referee
(a port, ``Referee``) evaluates the base revision on the approval window and the candidate on the incident
window, computing the metric from the labels it kept back, and the gate reads those figures. When the
environment a revision declares cannot be had (``RefereeEnvironmentFailed``), the incident ends with an
``EnvironmentFailed`` event: an outcome, not a dead letter."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from contracts.common import PolicyRef
from contracts.events.evaluation import EnvironmentFailed, EvaluationPassed, EvaluationReported, RegressionDetected
from libs.policy.model_policy import ModelPolicy
from services.detector.gate import MetricMissing, apply_gate
from services.detector.policy_catalog import LoadedPolicy

StorePolicy = Callable[[LoadedPolicy], PolicyRef]


@dataclass(frozen=True)
class RefereedMetrics:
    """The referee's figures: the base revision on the approval window, the candidate on the incident window."""

    baseline: dict[str, float]
    candidate: dict[str, float]


Referee = Callable[[EvaluationReported, ModelPolicy], RefereedMetrics]


class NoPolicy(LookupError):
    pass


class RefereeFailed(RuntimeError):
    """The referee could not compute a figure (a revision's predict failed or broke the contract)."""


class RefereeEnvironmentFailed(RefereeFailed):
    """The environment a revision declares could not be built (or its declaration was refused)."""

    def __init__(
        self, revision: str, reason: str, *, declaration: str = "", digest: str = "", resolver_message: str = ""
    ) -> None:
        self.revision = revision
        self.reason = reason
        self.declaration = declaration
        self.digest = digest
        self.resolver_message = resolver_message
        super().__init__(f"the {revision} revision's environment could not be had: {reason}")


def detect(
    evaluation: EvaluationReported,
    policy: LoadedPolicy | None,
    store_policy: StorePolicy,
    referee: Referee | None = None,
) -> BaseModel:
    if policy is None:
        raise NoPolicy(f"no policy applies to {evaluation.workspace.model_urn}")
    gate_policy = policy.policy.gate
    if policy.policy.workspace.referee:
        if referee is None:
            raise RefereeFailed("the workspace declares predict but this detector has no referee")
        try:
            figures = referee(evaluation, policy.policy)
        except RefereeEnvironmentFailed as failure:
            return EnvironmentFailed(
                run_id=evaluation.run_id,
                workspace=evaluation.workspace,
                policy=store_policy(policy),
                revision="base" if failure.revision == "baseline" else "candidate",
                declaration=failure.declaration[:200],
                digest=failure.digest,
                reason=failure.reason[:2000],
                resolver_message=failure.resolver_message[-4000:],
            )
        claim = evaluation.claimed
        claimed = (claim.baseline, claim.candidate) if claim is not None else None
        gate = apply_gate(gate_policy, figures.baseline, figures.candidate, source="referee", claimed=claimed)
    elif evaluation.claimed is None:
        raise MetricMissing(f"the workspace declares no predict and the report claims no {gate_policy.metric!r}")
    else:
        gate = apply_gate(gate_policy, evaluation.claimed.baseline, evaluation.claimed.candidate)
    ref = store_policy(policy)
    common = {"run_id": evaluation.run_id, "workspace": evaluation.workspace, "policy": ref, "gate": gate}
    return RegressionDetected(**common) if gate.regressed else EvaluationPassed(**common)
