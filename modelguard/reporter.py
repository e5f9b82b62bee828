"""The model's CI, played locally: build the scenario repository, evaluate base and candidate, report.

In production the model's own CI pipeline does this and posts an EvaluationReported event; here the
scenario bundle stands in for that repository, and every metric comes from running its evaluation.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from contracts.common import WorkspaceRefs
from contracts.events.evaluation import EvaluationReported
from libs.artifacts.store import LocalArtifactStore
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from libs.events.identity import incident_id_for
from libs.policy import parse_policy
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from libs.workspace.commands import evaluate
from libs.workspace.repository import build_repository
from libs.workspace.scenario import load_scenario
from libs.workspace.scenario_data import generate_scenario_data
from libs.workspace.snapshot import extract_snapshot, snapshot_commit

PRODUCER = "reporter"


@dataclass(frozen=True)
class ReportedRun:
    signed: SignedEvent
    evaluation: EvaluationReported
    seconds: float


def evaluate_scenario(
    scenario_dir: Path, workdir: Path, artifacts: LocalArtifactStore, run_id: str, pull_request: int | None
) -> EvaluationReported:
    scenario = load_scenario(scenario_dir)
    policy = parse_policy(scenario.policy_path.read_bytes(), str(scenario.policy_path))
    repo = build_repository(scenario_dir, workdir / "repository")
    base_sha, candidate_sha = repo.commits["base"], repo.commits["candidate"]
    data_path = generate_scenario_data(scenario, workdir / "data")
    spec = policy.workspace.model_dump()
    metrics: dict[str, dict[str, float]] = {}
    snapshots = {}
    for name, sha in (("base", base_sha), ("candidate", candidate_sha)):
        tar = snapshot_commit(repo.path, sha)
        snapshots[name] = artifacts.put(tar, "application/x-tar")
        tree = workdir / "trees" / run_id / name
        extract_snapshot(tar, tree)
        metrics[name] = evaluate(tree, data_path, spec).metrics
    workspace = WorkspaceRefs(
        model_urn=scenario.model_urn,
        repository=scenario.repository,
        pull_request=pull_request,
        base_commit=base_sha,
        candidate_commit=candidate_sha,
        base_snapshot=snapshots["base"],
        candidate_snapshot=snapshots["candidate"],
        data=artifacts.put(data_path.read_bytes(), "text/csv"),
    )
    return EvaluationReported(
        run_id=run_id,
        workspace=workspace,
        baseline_metrics=metrics["base"],
        candidate_metrics=metrics["candidate"],
        evaluation_command=list(policy.workspace.evaluate),
    )


def incident_of(evaluation: EvaluationReported, metric: str) -> str:
    w = evaluation.workspace
    return incident_id_for(w.model_urn, w.base_commit, w.candidate_commit, metric)


def sign_report(evaluation: EvaluationReported, metric: str, key: SigningKey) -> SignedEvent:
    """The run id is an input: a CI retry is a new run of the same incident."""
    event = next_event(
        evaluation,
        producer=PRODUCER,
        producer_version=MODELGUARD_VERSION,
        occurred_at=datetime.now(UTC),
        incident_id=incident_of(evaluation, metric),
        extra_input_digests=[hashlib.sha256(evaluation.model_dump_json().encode()).hexdigest()],
    )
    return seal(event, key)
