"""Onboarding a model without a redeploy, over the running stack: a model the platform opened to self-onboarding
sends its policy with its first evaluation (the Action's `policy-file`) and is gated by it; a policy the platform
adds to its policy folder applies to the next evaluation with no restart. docs/deploy.md, "Onboarding a model"."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from libs.bus.embedded_broker import free_loopback_port
from libs.policy.central import DEFAULT_CENTRAL_POLICY
from modelguard.incident_log import incident_events
from tests.e2e.conftest import CHURN
from tests.support.github_action import ActionRun, run_action
from tests.support.running_stack import RunningStack, running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.broker]

TOKEN = "onboarding-ingest-token-0123456789"
SELF_ONBOARDED = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,team-onboarded-churn,PROD)"
PLATFORM_ADDED = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,platform-added-churn,PROD)"
POLICY_PATH = ".modelguard/policy.yaml"
IDENTITY = {"GIT_AUTHOR_NAME": "Ana Ruiz", "GIT_AUTHOR_EMAIL": "ana@acme.example"}
IDENTITY |= {"GIT_COMMITTER_NAME": "GitHub", "GIT_COMMITTER_EMAIL": "noreply@github.com"}


@pytest.fixture(scope="module")
def onboarding_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningStack, str]]:
    root = tmp_path_factory.mktemp("onboarding-stack")
    central = yaml.safe_load(DEFAULT_CENTRAL_POLICY.read_text())
    central["onboarding"] = {"submitted_policies_for": ["urn:li:mlModel:(urn:li:dataPlatform:mlflow,team-*"]}
    (root / "central.yaml").write_text(yaml.safe_dump(central))
    port = free_loopback_port()
    env = {
        "MODELGUARD_INGEST_PORT": str(port),
        "MODELGUARD_INGEST_TOKEN": TOKEN,
        "MODELGUARD_INGEST_HOST": "127.0.0.1",
        "MODELGUARD_CENTRAL_POLICY": str(root / "central.yaml"),
    }
    with running_stack(root / "home", env) as stack:
        yield stack, f"http://127.0.0.1:{port}"


def _git(repo: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(repo), **IDENTITY}
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def _churn_policy() -> dict[str, object]:
    bundle = yaml.safe_load((CHURN / "bundle.yaml").read_text())
    return {"name": "team-churn", "gate": bundle["gate"], "workspace": bundle["workspace"]}


def _repository(root: Path, policy_in_candidate: bool) -> Path:
    """The churn model's code in both commits; the candidate adds the team's ModelGuard policy (or nothing)."""
    origin = root / "origin"
    origin.mkdir(parents=True)
    _git(origin, "init", "-q", "-b", "main")
    shutil.copytree(
        CHURN / "workspace" / "base", origin, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    _git(origin, "add", "--all")
    _git(origin, "commit", "-q", "-m", "Churn model")
    (origin / "NOTES.md").write_text("Onboarding to ModelGuard.\n")
    if policy_in_candidate:
        (origin / POLICY_PATH).parent.mkdir()
        (origin / POLICY_PATH).write_text(yaml.safe_dump(_churn_policy()))
    _git(origin, "add", "--all")
    _git(origin, "commit", "-q", "-m", "Onboard to ModelGuard")
    checkout = root / "workspace"
    _git(origin, "worktree", "add", "-q", "--detach", str(checkout), "HEAD")
    return checkout


def _action(checkout: Path, url: str, model_urn: str, run_id: str, **extra: str) -> ActionRun:
    data = CHURN / "data"
    predict = yaml.safe_load((CHURN / "bundle.yaml").read_text())["workspace"]["predict"]
    inputs = {
        "url": url,
        "token": TOKEN,
        "model-urn": model_urn,
        **{f"{w}-{n}": str(data / w / f"{n}.csv") for w in ("approval", "incident") for n in ("train", "eval")},
        "evaluation-command": json.dumps(predict),
        "base": _git(checkout, "rev-parse", "HEAD~1"),
        "candidate": _git(checkout, "rev-parse", "HEAD"),
        "repository": "acme-analytics/churn-onboarding",
        "pull-request": "5",
        "run-id": run_id,
        "timeout-seconds": "600",
        "poll-seconds": "1",
    } | extra
    return run_action(checkout, checkout.parent / f"runner-{run_id}", inputs, timeout_s=660)


def test_a_model_sends_its_policy_with_its_first_evaluation_and_is_gated_by_it(
    onboarding_stack: tuple[RunningStack, str], tmp_path: Path
) -> None:
    stack, url = onboarding_stack
    checkout = _repository(tmp_path, policy_in_candidate=True)

    run = _action(checkout, url, SELF_ONBOARDED, "5-1", **{"policy-file": POLICY_PATH})

    assert run.code == 0, run.log  # the same model code on both commits: the gate passes
    assert f"modelguard: policy {POLICY_PATH} of " in run.log and ": pinned" in run.log
    assert run.outputs["outcome"] == "gate_passed" and run.outputs["ci"] == "pass", run.outputs
    events = incident_events(stack.ledger, run.outputs["incident-id"], stack.registry)
    detected = events[1].event.payload
    assert detected.policy.name == "team-churn", "the incident records the submitted policy"
    assert stack.settings.policy_dir.joinpath("team-churn.yaml").exists() is False


def test_a_policy_the_platform_adds_to_its_folder_applies_without_a_restart(
    onboarding_stack: tuple[RunningStack, str], tmp_path: Path
) -> None:
    stack, url = onboarding_stack
    checkout = _repository(tmp_path, policy_in_candidate=False)
    refused = _action(checkout, url, PLATFORM_ADDED, "6-1", wait="false")
    assert refused.code == 6 and f"no policy applies to {PLATFORM_ADDED}" in refused.stderr, refused.log

    churn = (
        stack.settings.policy_dir / f"{CHURN.name}.yaml"
    )  # the churn bundle's effective policy, as stack up wrote it
    added = yaml.safe_load(churn.read_text()) | {"name": "platform-added-churn", "applies_to": [PLATFORM_ADDED]}
    (stack.settings.policy_dir / "platform-added-churn.yaml").write_text(yaml.safe_dump(added))

    run = _action(checkout, url, PLATFORM_ADDED, "6-2")
    assert run.code == 0 and run.outputs["outcome"] == "gate_passed", run.log
    detected = incident_events(stack.ledger, run.outputs["incident-id"], stack.registry)[1].event.payload
    assert detected.policy.name == "platform-added-churn"
