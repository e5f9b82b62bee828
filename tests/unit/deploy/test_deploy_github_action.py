"""The composite GitHub Action: well-formed, and its step, run by bash as a runner would, uploads the commits'
`git archive` tars and the data, reports the evaluation, waits for the verdict and exits by it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from libs.events.codec import SignedEvent
from modelguard.stack import REPO_ROOT
from services.detector.ingest_verdict import Verdict, verdict_of
from tests.unit.deploy.loopback_ingestion import MODEL, TOKEN, LoopbackIngestion, loopback_ingestion

ACTION = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
INPUT_REF = re.compile(r"\$\{\{\s*inputs\.([a-z0-9-]+)\s*\}\}")


def test_the_action_is_composite_and_uses_only_declared_inputs_and_existing_files() -> None:
    assert ACTION["runs"]["using"] == "composite"
    [step] = ACTION["runs"]["steps"]
    assert step["shell"] == "bash" and step["id"] == "report"
    referenced = set(INPUT_REF.findall(json.dumps(ACTION["runs"])))
    assert referenced == set(ACTION["inputs"])
    assert "${{" not in step["run"], "inputs reach the script through env only, never spliced into the shell"
    assert {o["value"] for o in ACTION["outputs"].values()} == {
        f"${{{{ steps.report.outputs.{name} }}}}" for name in ACTION["outputs"]
    }
    assert "$GITHUB_ACTION_PATH/deploy/github-action/modelguard_ci.py" in step["run"]
    assert (REPO_ROOT / "deploy" / "github-action" / "modelguard_ci.py").exists()


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "ci", "GIT_AUTHOR_EMAIL": "ci@example.com"}
    env |= {"GIT_COMMITTER_NAME": "ci", "GIT_COMMITTER_EMAIL": "ci@example.com"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def model_repository(tmp_path: Path) -> Path:
    repo = tmp_path / "model"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "features.py").write_text("def spend(total, months):\n    return total / months\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "features.py").write_text("def spend(total, months):\n    return total / (months - 1)\n")
    _git(repo, "commit", "-q", "-am", "candidate")
    (repo / "baseline.json").write_text('{"f1": 0.91}')
    (repo / "candidate.json").write_text('{"f1": 0.84}')
    (repo / "eval.csv").write_text("total,months\n10,2\n")
    return repo


def _run_action(repo: Path, ingestion: LoopbackIngestion, run_id: str, **overrides: str) -> tuple[int, str, str]:
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs |= {
        "url": ingestion.url,
        "token": TOKEN,
        "model-urn": MODEL,
        "baseline-metrics": "baseline.json",
        "candidate-metrics": "candidate.json",
        "data": "eval.csv",
        "base": "HEAD~1",
        "candidate": "HEAD",
        "repository": "acme/churn-model",
        "pull-request": "7",
        "run-id": run_id,
        "poll-seconds": "0.1",
        "timeout-seconds": "20",
    } | overrides
    [step] = ACTION["runs"]["steps"]
    step_env = {k: INPUT_REF.sub(lambda m: inputs[m.group(1)], str(v)) for k, v in step["env"].items()}
    outputs = repo / "github_output"
    outputs.write_text("")
    env = {"PATH": os.environ["PATH"], "GITHUB_ACTION_PATH": str(REPO_ROOT), "GITHUB_OUTPUT": str(outputs)}
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=repo, env=env | step_env, capture_output=True, text=True, timeout=60
    )
    return done.returncode, done.stdout + done.stderr, outputs.read_text()


def _finished_after_first_ask(status: str, outcome: str | None) -> Any:
    asked: list[str] = []

    def verdict(incident_id: str, run_id: str, events: list[SignedEvent]) -> Verdict:
        asked.append(run_id)
        pending = verdict_of(incident_id, run_id, events)
        if len(asked) == 1:
            return pending
        gate = {"metric": "f1", "baseline": 0.91, "candidate": 0.84, "regressed": status != "passed"}
        return Verdict(incident_id, run_id, status, True, outcome, gate, pending.events)

    return verdict


def test_a_regression_is_reported_with_the_commits_tars_and_fails_the_step(
    model_repository: Path, tmp_path: Path
) -> None:
    with loopback_ingestion(tmp_path, _finished_after_first_ask("published", "repair_proposed")) as ingestion:
        code, log, outputs = _run_action(model_repository, ingestion, "gh-101-1")

    assert code == 1, log
    [report] = ingestion.published
    workspace = report.event.payload.workspace
    candidate_tar = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD"], cwd=model_repository, capture_output=True, check=True
    ).stdout
    assert workspace.candidate_snapshot.sha256 == hashlib.sha256(candidate_tar).hexdigest()
    assert workspace.base_commit == _git(model_repository, "rev-parse", "HEAD~1").strip()
    assert ingestion.artifacts.get(workspace.data) == b"total,months\n10,2\n"
    assert report.event.payload.candidate_metrics == {"f1": 0.84}
    assert (workspace.repository, workspace.pull_request) == ("acme/churn-model", 7)
    incident = report.event.meta.incident_id
    assert f"incident-id={incident}\nstatus=published\noutcome=repair_proposed\n" == outputs
    assert "published, outcome repair_proposed (f1: 0.91 -> 0.84)" in log
    assert TOKEN not in log


def test_a_passed_gate_passes_the_step_and_a_wrong_token_is_one_line(model_repository: Path, tmp_path: Path) -> None:
    with loopback_ingestion(tmp_path, _finished_after_first_ask("passed", None)) as ingestion:
        passed, log, _ = _run_action(model_repository, ingestion, "gh-102-1")
        refused, refusal, _ = _run_action(model_repository, ingestion, "gh-102-2", token="not-the-right-token")

    assert passed == 0, log
    assert refused == 2
    assert refusal.strip().splitlines()[-1].endswith("answered 401: missing or wrong bearer token")
    assert "not-the-right-token" not in refusal
