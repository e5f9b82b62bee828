"""The detector's referee: both revisions' trees and the data windows from the artifact store, the base
revision predicted on the approval window and the candidate on the incident window, in the sandbox, and the
gate metric computed from the labels ModelGuard kept back."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from pathlib import Path

from contracts.events.evaluation import EvaluationReported
from libs.artifacts.store import ArtifactCorrupted, ArtifactNotFound, ArtifactStore
from libs.policy.model_policy import GatePolicy, ModelPolicy, WorkspacePolicy
from libs.workspace.commands import WorkspaceCommandFailed
from libs.workspace.data_windows import DataWindow
from libs.workspace.evaluation_cache import EvaluationCache
from libs.workspace.materialize import materialized_workspace
from libs.workspace.model_evaluation import ModelEvaluation, evaluate_model
from libs.workspace.runner import CommandNotAllowed, CommandTimedOut
from libs.workspace.snapshot import UnsafeSnapshot
from libs.workspace_env.failure import EnvironmentUnavailable
from services.detector.handler import Referee, RefereedMetrics, RefereeEnvironmentFailed, RefereeFailed

REFEREE_RUNS = 2
"""the evaluations a referee makes: the baseline on the approval window, the candidate on the incident window"""

FAILURES = (WorkspaceCommandFailed, CommandTimedOut, CommandNotAllowed, OSError, ValueError)


Evaluate = Callable[[Path, DataWindow, WorkspacePolicy, GatePolicy], ModelEvaluation]
"""One revision's evaluation on one data window (``evaluate_model``: the workspace's commands in the sandbox)."""


def artifact_referee(
    artifacts: ArtifactStore,
    scratch: Path,
    cache: EvaluationCache | None = None,
    parallel: int = 1,
    evaluate: Evaluate | None = None,
) -> Referee:
    """``evaluate``: how one revision is measured (``evaluate_model`` when None, looked up at each call).
    ``cache``: evaluations measured before (by this service or another of the same home) are not run again.
    ``parallel``: the two revisions' evaluations are independent, so with 2 they run at once (the detector's
    production wiring bounds it by the CPUs it may use; the model's ``diagnosis.max_parallel_evaluations`` bounds it
    too); a failure is reported for the baseline first either way."""

    def measured(name: str, tree: Path, window: DataWindow, policy: ModelPolicy) -> dict[str, float]:
        try:
            if cache is not None:
                return cache.evaluate(tree, window, policy.workspace, policy.gate, evaluate=evaluate).evaluation.metrics
            return (evaluate or evaluate_model)(tree, window, policy.workspace, policy.gate).metrics
        except EnvironmentUnavailable as error:
            raise RefereeEnvironmentFailed(
                name,
                _without(error.reason, scratch),
                declaration=error.declaration,
                digest=error.digest,
                resolver_message=_without(error.resolver_message, scratch),
            ) from error
        except FAILURES as error:
            message = " ".join(str(error).replace(str(scratch), "<scratch>").split())
            raise RefereeFailed(f"the {name} revision could not be refereed: {message[-600:]}") from error

    def referee(evaluation: EvaluationReported, policy: ModelPolicy) -> RefereedMetrics:
        try:
            with materialized_workspace(artifacts, evaluation.workspace, scratch) as workspace:
                runs = (
                    ("baseline", workspace.base, workspace.approval),
                    ("candidate", workspace.candidate, workspace.incident),
                )
                # each run in a copy of this thread's context: its spans and log lines keep the incident's
                with ThreadPoolExecutor(max_workers=_workers(parallel, policy)) as pool:
                    futures = [
                        pool.submit(copy_context().run, measured, name, tree, window, policy)
                        for name, tree, window in runs
                    ]
                    baseline, candidate = (future.result() for future in futures)
        except (ArtifactNotFound, ArtifactCorrupted, UnsafeSnapshot) as error:
            raise RefereeFailed(f"the evaluation's inputs are unavailable: {error}") from error
        return RefereedMetrics(baseline=baseline, candidate=candidate)

    return referee


def _workers(parallel: int, policy: ModelPolicy) -> int:
    allowed = policy.diagnosis.max_parallel_evaluations if policy.diagnosis is not None else REFEREE_RUNS
    return max(1, min(parallel, allowed, REFEREE_RUNS))


def _without(text: str, scratch: Path) -> str:
    """``text`` with the referee's scratch folder (where the revisions were laid out) named as such."""
    return text.replace(str(scratch), "<scratch>")
