"""Detector: an evaluation in, a regression or a pass out, decided by the model's policy gate."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from contracts.common import PolicyRef
from contracts.events.evaluation import EvaluationPassed, EvaluationReported, RegressionDetected
from services.detector.gate import apply_gate
from services.detector.policy_catalog import LoadedPolicy

StorePolicy = Callable[[LoadedPolicy], PolicyRef]


class NoPolicy(LookupError):
    pass


def detect(evaluation: EvaluationReported, policy: LoadedPolicy | None, store_policy: StorePolicy) -> BaseModel:
    if policy is None:
        raise NoPolicy(f"no policy applies to {evaluation.workspace.model_urn}")
    gate = apply_gate(policy.policy.gate, evaluation.baseline_metrics, evaluation.candidate_metrics)
    ref = store_policy(policy)
    common = {"run_id": evaluation.run_id, "workspace": evaluation.workspace, "policy": ref, "gate": gate}
    return RegressionDetected(**common) if gate.regressed else EvaluationPassed(**common)
