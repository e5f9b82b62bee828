"""The GitHub Action's own step, unchanged, against the running stack: a model repository with two commits (the
churn bundle's base and candidate trees), checked out as a worktree the way actions/checkout leaves it, the
step's `run:` script executed by bash with the env a runner gives it, the two data windows as four files, no
metrics (the workspace declares `predict`: the detector referees). No verdict is faked: the step waits for the
seven services to detect, diagnose, repair, validate and publish, then exits by the central policy's CI result
for the outcome. docs/deploy.md, "Model CI", describes exactly this run."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from libs.bus.embedded_broker import free_loopback_port
from libs.workspace.data_windows import MEDIA_TYPE
from modelguard.incident_log import incident_events
from tests.e2e.conftest import CHURN
from tests.support.github_action import run_action
from tests.support.running_stack import RunningStack, running_stack
from tests.support.sample_events import REPAIRED_INCIDENT_EVENTS

pytestmark = [pytest.mark.e2e, pytest.mark.broker]

TOKEN = "action-ingest-token-0123456789"
REPOSITORY = "acme-analytics/churn-model"
IDENTITY = {"GIT_AUTHOR_NAME": "Marco Jensen", "GIT_AUTHOR_EMAIL": "marco@acme.example"}
IDENTITY |= {"GIT_COMMITTER_NAME": "GitHub", "GIT_COMMITTER_EMAIL": "noreply@github.com"}


@pytest.fixture(scope="module")
def stack_with_ingestion(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningStack, str]]:
    port = free_loopback_port()
    env = {"MODELGUARD_INGEST_PORT": str(port), "MODELGUARD_INGEST_TOKEN": TOKEN, "MODELGUARD_INGEST_HOST": "127.0.0.1"}
    with running_stack(tmp_path_factory.mktemp("action-stack"), env) as stack:
        yield stack, f"http://127.0.0.1:{port}"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        env={"PATH": "/usr/bin:/bin", "HOME": str(repo), **IDENTITY},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def _commit_tree(repo: Path, tree: Path, message: str) -> str:
    for entry in repo.iterdir():
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    shutil.copytree(tree, repo, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(repo, "add", "--all")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _model_repository(root: Path) -> tuple[Path, str, str]:
    """The model's repository with the base and candidate commits, and the runner's checkout of the candidate."""
    origin = root / "churn-model"
    origin.mkdir()
    _git(origin, "init", "-q", "-b", "main")
    base = _commit_tree(origin, CHURN / "workspace" / "base", "Churn model v3: monthly spend feature")
    candidate = _commit_tree(origin, CHURN / "workspace" / "candidate", "Simplify monthly spend calculation")
    checkout = root / "workspace"
    _git(origin, "worktree", "add", "-q", "--detach", str(checkout), candidate)
    return checkout, base, candidate


def test_the_actions_step_reports_a_pull_request_and_exits_by_the_published_outcome(
    stack_with_ingestion: tuple[RunningStack, str], tmp_path: Path
) -> None:
    stack, url = stack_with_ingestion
    checkout, base, candidate = _model_repository(tmp_path)
    predict = yaml.safe_load((CHURN / "bundle.yaml").read_text())["workspace"]["predict"]
    data = CHURN / "data"
    inputs = {
        "url": url,
        "token": TOKEN,
        "model-urn": "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)",
        "approval-train": str(data / "approval" / "train.csv"),
        "approval-eval": str(data / "approval" / "eval.csv"),
        "incident-train": str(data / "incident" / "train.csv"),
        "incident-eval": str(data / "incident" / "eval.csv"),
        "evaluation-command": "".join(f"- {json.dumps(arg)}\n" for arg in predict),  # a YAML list, as `with:` takes it
        # what the runner renders from the pull_request event for the ${{ github.* }} defaults
        "base": base,
        "candidate": candidate,
        "repository": REPOSITORY,
        "pull-request": "42",
        "run-id": "4242-1",
        "timeout-seconds": "900",
        "poll-seconds": "1",
    }
    started = time.monotonic()

    run = run_action(checkout, tmp_path / "runner", inputs, timeout_s=960)

    seconds = time.monotonic() - started
    print(f"the Action's step took {seconds:.1f} s")
    assert run.code == 1, run.log  # a validated repair fails the job by the default central policy
    incident = run.outputs["incident-id"]
    assert run.outputs == {
        "incident-id": incident,
        "status": "published",
        "outcome": "repair_validated",
        "ci": "fail",
        "reason": "",
    }
    assert "published, outcome repair_validated, CI fail (f1: " in run.summary and TOKEN not in run.log

    verdict = httpx.get(
        f"{url}/incidents/{incident}/runs/4242-1", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
    ).json()
    assert verdict["events"] == [*REPAIRED_INCIDENT_EVENTS]
    assert verdict["gate"]["metric_source"] == "referee" and verdict["gate"]["regressed"] is True
    assert verdict["gate"]["claimed_baseline"] is None, "the CI claimed no figure"

    events = incident_events(stack.ledger, incident, stack.registry)
    report = events[0].event.payload
    assert report.claimed is None
    assert report.evaluation_command == predict
    workspace = report.workspace
    assert (workspace.base_commit, workspace.candidate_commit) == (base, candidate)
    assert (workspace.repository, workspace.pull_request, workspace.data.media_type) == (REPOSITORY, 42, MEDIA_TYPE)

    github = stack.settings.publish_dir / "github" / REPOSITORY.replace("/", "_")
    check_run = json.loads((github / "check-runs" / f"{candidate}-{incident}.json").read_text())
    assert (check_run["head_sha"], check_run["external_id"]) == (candidate, incident)
    assert check_run["conclusion"] == "action_required" and check_run["status"] == "completed"
    assert check_run["output"]["title"] == "A validated repair is proposed for review"
    assert "feature_transformation" in check_run["output"]["text"]
    assert list((github / "pr-42").glob("*.md")), "the diagnosis is commented on the pull request"
