"""A trial runner for one diagnosis: the policy's budget, and as many evaluations at once as the policy allows and
the CPUs this process may use."""

from __future__ import annotations

from pathlib import Path

from libs.policy.diagnosis import DiagnosisPolicy
from libs.policy.model_policy import GatePolicy, WorkspacePolicy
from libs.workspace.evaluation_cache import EvaluationCache
from libs.workspace.usable_cpus import usable_cpus
from services.diagnoser.trials.runner import TrialRunner


def trial_runner(
    workspace: WorkspacePolicy,
    gate: GatePolicy,
    thresholds: DiagnosisPolicy,
    scrub: tuple[Path, ...] = (),
    cache: EvaluationCache | None = None,
) -> TrialRunner:
    return TrialRunner(
        workspace=workspace,
        gate=gate,
        budget=thresholds.max_evaluations,
        parallel=max(1, min(thresholds.max_parallel_evaluations, usable_cpus())),
        scrub=scrub,
        cache=cache,
    )
