"""The detector process serving POST /evaluations on the embedded broker: a bad token and a bad body refused,
a good report put on the bus signed, gated by the detector, logged by the ledger, its verdict served, and its
spans in the incident's trace."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from contracts.events.evaluation import ClaimedMetrics
from contracts.registry import contract_for
from libs.bus.embedded_broker import free_loopback_port
from libs.events.codec import open_envelope
from libs.telemetry import incident_trace_id
from modelguard.stack import REPO_ROOT
from services.detector.policy_catalog import load_policies
from tests.support.kafka_reader import read_topic
from tests.support.running_stack import RunningStack, running_stack
from tests.support.sample_events import evaluation
from tests.support.self_reported_policy import install_self_reported_policy
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.broker]

TOKEN = "stack-ingest-token-0123456789"


@pytest.fixture(scope="module")
def ingesting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningStack, str]]:
    port = free_loopback_port()
    env = {"MODELGUARD_INGEST_PORT": str(port), "MODELGUARD_INGEST_TOKEN": TOKEN, "MODELGUARD_INGEST_HOST": "127.0.0.1"}
    home = tmp_path_factory.mktemp("ingest")
    install_self_reported_policy(home)  # the reports below carry fake artifacts: gate on their own figures
    with running_stack(home, env, services=("ledger", "detector")) as stack:
        yield stack, f"http://127.0.0.1:{port}"


def _call(url: str, method: str, path: str, token: str = TOKEN, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
    return httpx.request(method, url + path, headers=headers, timeout=30, **kwargs)


def _a_model_and_metric_the_policies_cover(stack: RunningStack) -> tuple[str, str]:
    policy = load_policies(stack.settings.policy_dir)[0].policy
    assert not policy.workspace.referee, "these reports carry no real trees for a referee to run"
    return policy.applies_to[0].replace("*", "x"), policy.gate.metric


def test_a_report_over_http_is_gated_logged_traced_and_answered(ingesting: tuple[RunningStack, str]) -> None:
    stack, url = ingesting
    model, metric = _a_model_and_metric_the_policies_cover(stack)
    sample = evaluation(run_id="http-run-1", seed="http")
    report = sample.model_copy(
        update={
            "workspace": sample.workspace.model_copy(update={"model_urn": model}),
            "claimed": ClaimedMetrics(baseline={metric: 0.80}, candidate={metric: 0.81}),
        }
    )
    body = report.model_dump(mode="json")

    assert _call(url, "POST", "/evaluations", token="not-the-token-at-all", json=body).status_code == 401
    refused = _call(url, "POST", "/evaluations", json=body | {"claimed": "high"})
    assert refused.status_code == 422
    assert refused.json() == {"error": "claimed: Input should be a valid dictionary or instance of ClaimedMetrics"}
    for part, media_type in (("base", "application/x-tar"), ("candidate", "application/x-tar"), ("data", "text/csv")):
        content = f"{part}-http".encode()
        path = f"/artifacts/{hashlib.sha256(content).hexdigest()}"
        assert _call(url, "PUT", path, content=content, headers={"Content-Type": media_type}).status_code == 201

    accepted = _call(url, "POST", "/evaluations", json=body)

    assert accepted.status_code == 202, accepted.text
    incident = accepted.json()["incident_id"]
    [record] = [
        r
        for r in read_topic(stack.bootstrap, contract_for("EvaluationReported").topic, expected=1, timeout_s=30)
        if r.key == incident.encode()
    ]
    on_the_bus = open_envelope(record.value, stack.registry)
    assert on_the_bus.event.payload == report and on_the_bus.event.meta.producer == "reporter"
    assert dict(record.headers)["traceparent"].decode().split("-")[1] == incident_trace_id(incident)

    deadline, verdict = time.monotonic() + 60, {}
    while time.monotonic() < deadline:
        verdict = _call(url, "GET", accepted.json()["verdict_url"]).json()
        if verdict["finished"]:
            break
        time.sleep(0.25)
    assert verdict["status"] == "passed" and verdict["events"] == ["EvaluationReported", "EvaluationPassed"]
    assert verdict["gate"]["metric"] == metric and verdict["gate"]["regressed"] is False

    def spans() -> list[dict[str, Any]]:
        return [json.loads(line) for line in (stack.settings.home / "traces.jsonl").read_text().splitlines()]

    def joined() -> set[str]:
        return {s["service"] for s in spans() if s["trace_id"] == incident_trace_id(incident)}

    # this report's request span: the module's other tests post evaluations of their own to the same detector
    requests = [s for s in spans() if s["name"] == "POST /evaluations" and s["trace_id"] == incident_trace_id(incident)]
    assert len(requests) == 1, "the report's request span is in the incident's trace"
    # the ledger's span is written when its handling ends, an instant after the verdict can read the events it stored
    assert wait_until(lambda: joined() == {"modelguard-detector", "modelguard-ledger"}, 30), joined()


def _two_commit_repository(root: Path) -> Path:
    repo = root / "model"
    repo.mkdir()
    identity = ["-c", "user.name=ci", "-c", "user.email=ci@example.com"]
    for step in (
        ["init", "-q"],
        ["commit", "-q", "--allow-empty", "-m", "base"],
        ["commit", "-q", "--allow-empty", "-m", "candidate"],
    ):
        subprocess.run(["git", *identity, *step], cwd=repo, check=True, capture_output=True)
    for window in ("approval", "incident"):
        for name in ("train", "eval"):
            (root / f"{window}-{name}.csv").write_text("x,churned\n1,0\n")
    return repo


def _ci_script(url: str, model: str, repo: Path, run_id: str, *extra: str) -> subprocess.CompletedProcess[str]:
    script = REPO_ROOT / "deploy" / "github-action" / "modelguard_ci.py"
    argv = [sys.executable, str(script), "--url", url, "--model-urn", model, "--repository", "acme/model"]
    argv += ["--repository-path", str(repo), "--base", "HEAD~1", "--candidate", "HEAD", "--run-id", run_id]
    for window in ("approval", "incident"):
        for name in ("train", "eval"):
            argv += [f"--{window}-{name}", str(repo.parent / f"{window}-{name}.csv")]
    argv += ["--evaluation-command", '["python", "evaluate.py"]', "--wait", "--poll", "0.25", "--timeout", "120"]
    env = {"PATH": os.environ["PATH"], "MODELGUARD_TOKEN": TOKEN}
    return subprocess.run([*argv, *extra], env=env, capture_output=True, text=True, timeout=180)


def test_the_ci_script_reports_a_real_repository_and_waits_for_the_detectors_verdict(
    ingesting: tuple[RunningStack, str], tmp_path: Path
) -> None:
    stack, url = ingesting
    model, metric = _a_model_and_metric_the_policies_cover(stack)
    repo = _two_commit_repository(tmp_path)
    (tmp_path / "base.json").write_text(json.dumps({metric: 0.70}))
    (tmp_path / "candidate.json").write_text(json.dumps({metric: 0.70}))
    metrics = [
        "--baseline-metrics",
        str(tmp_path / "base.json"),
        "--candidate-metrics",
        str(tmp_path / "candidate.json"),
    ]

    done = _ci_script(url, model, repo, "script-1", *metrics)

    assert done.returncode == 0, done.stdout + done.stderr
    assert ": passed, outcome gate_passed, CI pass (" in done.stdout and TOKEN not in done.stdout + done.stderr


def test_a_run_the_detector_dead_letters_is_reported_at_once_with_the_reason(
    ingesting: tuple[RunningStack, str], tmp_path: Path
) -> None:
    """A self-reported workspace's report without its metrics: the detector refuses it onto the dead-letter
    topic, its own consumer records that, and the verdict says so long before the script's timeout."""
    stack, url = ingesting
    model, metric = _a_model_and_metric_the_policies_cover(stack)
    repo = _two_commit_repository(tmp_path)
    started = time.monotonic()

    done = _ci_script(url, model, repo, "script-dead")

    assert done.returncode == 4, done.stdout + done.stderr
    assert time.monotonic() - started < 60, "reported at once, not after the 120 s timeout"
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("modelguard: dead-lettered: detector dead-lettered modelguard.evaluation-reported.v2/")
    assert last.endswith(f"bad-evaluation: the workspace declares no predict and the report claims no '{metric}'"), last
