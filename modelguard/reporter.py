"""The model's CI, played locally: build the bundle's repository, evaluate base and candidate, report.

In production the model's own CI pipeline does this and posts an EvaluationReported event; here the
bundle stands in for that repository, and every metric comes from running its evaluation.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from contracts.common import WorkspaceRefs
from contracts.events.evaluation import EvaluationReported
from libs.artifacts.store import ArtifactStore
from libs.bundle.load import load_bundle
from libs.events.codec import SignedEvent
from libs.events.evaluation_report import PRODUCER, incident_of, sign_report
from libs.workspace.commands import evaluate
from libs.workspace.data_windows import FILE_NAMES, WINDOW_NAMES, pack_data_windows, unpack_data_windows
from libs.workspace.data_windows import MEDIA_TYPE as DATA_WINDOWS_MEDIA_TYPE
from libs.workspace.repository import build_repository
from libs.workspace.snapshot import extract_snapshot, snapshot_commit


@dataclass(frozen=True)
class ReportedRun:
    signed: SignedEvent
    evaluation: EvaluationReported
    seconds: float


def evaluate_bundle(
    bundle_dir: Path, workdir: Path, artifacts: ArtifactStore, run_id: str, pull_request: int | None
) -> EvaluationReported:
    """Build the bundle's repository, store both snapshots and the data windows, and report the metrics:
    the bundle's reported ones when it has them; else, for a workspace that only self-reports (``evaluate``),
    the base revision on the approval window (baseline) and the candidate revision on the incident window
    (candidate), computed by running its evaluation; a workspace with ``predict`` claims nothing, the
    detector's referee computes both figures itself."""
    bundle = load_bundle(bundle_dir)
    repo = build_repository(bundle, workdir / "repository" / bundle.name)
    base_sha, candidate_sha = repo.commits["base"], repo.commits["candidate"]
    windows = {w: {n: bundle.window_file(w, n) for n in FILE_NAMES} for w in WINDOW_NAMES}
    data = pack_data_windows(windows)
    spec = bundle.spec.workspace.command_spec()
    snapshots = {
        name: snapshot_commit(repo.path, sha) for name, sha in (("base", base_sha), ("candidate", candidate_sha))
    }
    if bundle.spec.metrics is not None:
        baseline, candidate = bundle.spec.metrics.baseline, bundle.spec.metrics.candidate
    elif bundle.spec.workspace.referee:
        baseline, candidate = {}, {}
    else:
        run_dir = workdir / "trees" / run_id / bundle.name
        shutil.rmtree(run_dir, ignore_errors=True)
        unpacked = unpack_data_windows(data, run_dir / "data")
        extract_snapshot(snapshots["base"], run_dir / "base")
        extract_snapshot(snapshots["candidate"], run_dir / "candidate")
        allowed = {bundle.spec.gate.metric, *bundle.spec.workspace.reported_metrics}
        baseline = evaluate(run_dir / "base", unpacked["approval"], spec, allowed).metrics
        candidate = evaluate(run_dir / "candidate", unpacked["incident"], spec, allowed).metrics
    workspace = WorkspaceRefs(
        model_urn=bundle.spec.model.urn,
        repository=bundle.spec.model.repository,
        pull_request=pull_request,
        base_commit=base_sha,
        candidate_commit=candidate_sha,
        base_snapshot=artifacts.put(snapshots["base"], "application/x-tar"),
        candidate_snapshot=artifacts.put(snapshots["candidate"], "application/x-tar"),
        data=artifacts.put(data, DATA_WINDOWS_MEDIA_TYPE),
    )
    return EvaluationReported(
        run_id=run_id,
        workspace=workspace,
        baseline_metrics=baseline,
        candidate_metrics=candidate,
        evaluation_command=list(bundle.spec.workspace.evaluation_command()),
    )


__all__ = ["PRODUCER", "ReportedRun", "evaluate_bundle", "incident_of", "sign_report"]
