"""The detector's referee: both revisions' trees and the data windows from the artifact store, the base
revision predicted on the approval window and the candidate on the incident window, in the sandbox, and the
gate metric computed from the labels ModelGuard kept back."""

from __future__ import annotations

from pathlib import Path

from contracts.events.evaluation import EvaluationReported
from libs.artifacts.store import ArtifactCorrupted, ArtifactNotFound, ArtifactStore
from libs.policy.model_policy import ModelPolicy
from libs.workspace.commands import WorkspaceCommandFailed
from libs.workspace.evaluation_cache import EvaluationCache
from libs.workspace.materialize import materialized_workspace
from libs.workspace.model_evaluation import evaluate_model
from libs.workspace.runner import CommandNotAllowed, CommandTimedOut
from libs.workspace.snapshot import UnsafeSnapshot
from libs.workspace_env.failure import EnvironmentUnavailable
from services.detector.handler import Referee, RefereedMetrics, RefereeEnvironmentFailed, RefereeFailed

FAILURES = (WorkspaceCommandFailed, CommandTimedOut, CommandNotAllowed, OSError, ValueError)


def artifact_referee(artifacts: ArtifactStore, scratch: Path, cache: EvaluationCache | None = None) -> Referee:
    """``cache``: evaluations measured before (by this service or another of the same home) are not run again."""

    def referee(evaluation: EvaluationReported, policy: ModelPolicy) -> RefereedMetrics:
        try:
            with materialized_workspace(artifacts, evaluation.workspace, scratch) as workspace:
                figures = {}
                for name, tree, window in (
                    ("baseline", workspace.base, workspace.approval),
                    ("candidate", workspace.candidate, workspace.incident),
                ):
                    try:
                        figures[name] = (
                            cache.evaluate(tree, window, policy.workspace, policy.gate).evaluation
                            if cache is not None
                            else evaluate_model(tree, window, policy.workspace, policy.gate)
                        ).metrics
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
        except (ArtifactNotFound, ArtifactCorrupted, UnsafeSnapshot) as error:
            raise RefereeFailed(f"the evaluation's inputs are unavailable: {error}") from error
        return RefereedMetrics(baseline=figures["baseline"], candidate=figures["candidate"])

    return referee


def _without(text: str, scratch: Path) -> str:
    """``text`` with the referee's scratch folder (where the revisions were laid out) named as such."""
    return text.replace(str(scratch), "<scratch>")
