"""The Action's `policy-file`: a model the platform lets onboard itself sends its policy with its evaluation.

The step sends the policy as the base commit has it (what was reviewed and merged), so a pull request that
loosens its own gate is judged by the policy it would change; ModelGuard pins the first accepted policy, so even
a merged loosening is refused until the platform removes the pin. The detector side is the real catalog
(services.detector.policy_catalog) over a real folder and pins file."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import yaml

from libs.policy.effective import read_central_policy
from libs.policy.model_policies.onboarding import OnboardingPolicy
from libs.policy.model_policies.pins import PolicyPins
from libs.state.sqlite_state import SqliteState
from services.detector.policy_catalog import PolicyCatalog, PolicyFolder
from tests.support.github_action import ActionRun, run_action
from tests.unit.deploy.loopback_ingestion import TOKEN, LoopbackIngestion, loopback_ingestion

MODEL = "urn:li:mlModel:(urn:li:dataPlatform:vertexai,loan-prepayment-xgb,PROD)"
POLICY_PATH = ".modelguard/policy.yaml"


def _policy(tolerance: float) -> str:
    return yaml.safe_dump(
        {
            "name": "loan-prepayment",
            "gate": {"metric": "roc_auc", "direction": "higher_is_better", "tolerance": tolerance},
            "workspace": {
                "predict": ["python", "score.py", "{train}", "{features}", "{predictions}"],
                "feature_modules": ["prepay/features.py"],
                "label": "prepaid_within_12m",
                "repair_paths": ["prepay/*.py"],
            },
        }
    )


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "ci", "GIT_AUTHOR_EMAIL": "ci@example.com"}
    env |= {"GIT_COMMITTER_NAME": "ci", "GIT_COMMITTER_EMAIL": "ci@example.com"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _commit(repo: Path, files: dict[str, str], message: str) -> None:
    for relative, text in files.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(text)
    _git(repo, "add", "--all")
    _git(repo, "commit", "-q", "-m", message)


def _repository(root: Path, base_policy: float | None, candidate_policy: float | None) -> Path:
    repo = root / "model"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    base = {"prepay/features.py": "def ratio(paid, owed):\n    return paid / owed\n"}
    _commit(repo, base | ({POLICY_PATH: _policy(base_policy)} if base_policy else {}), "base")
    candidate = {"prepay/features.py": "def ratio(paid, owed):\n    return paid / (owed + 1)\n"}
    _commit(repo, candidate | ({POLICY_PATH: _policy(candidate_policy)} if candidate_policy else {}), "candidate")
    return repo


def _catalog(root: Path, submitted_for: tuple[str, ...]) -> PolicyCatalog:
    (root / "policies").mkdir(exist_ok=True)
    onboarding = OnboardingPolicy(submitted_policies_for=submitted_for, max_tolerance=0.05)
    pins = PolicyPins.of(SqliteState(lambda service: root / service))
    return PolicyCatalog(PolicyFolder(root / "policies"), pins, read_central_policy(), onboarding)


def _action(repo: Path, ingestion: LoopbackIngestion, run_id: str) -> ActionRun:
    for window in ("approval", "incident"):
        for name in ("train", "eval"):
            (repo.parent / window).mkdir(exist_ok=True)
            (repo.parent / window / f"{name}.csv").write_text("paid,owed,prepaid_within_12m\n1,2,0\n3,4,1\n")
    inputs = {
        "url": ingestion.url,
        "token": TOKEN,
        "model-urn": MODEL,
        "policy-file": POLICY_PATH,
        **{f"{w}-{n}": str(repo.parent / w / f"{n}.csv") for w in ("approval", "incident") for n in ("train", "eval")},
        "base": "HEAD~1",
        "candidate": "HEAD",
        "repository": "lendco/prepayment",
        "pull-request": "3",
        "run-id": run_id,
        "wait": "false",
    }
    return run_action(repo, repo.parent / f"runner-{run_id}", inputs, timeout_s=60)


def test_the_base_commits_policy_is_sent_pinned_and_governs_the_evaluation(tmp_path: Path) -> None:
    repo = _repository(tmp_path, base_policy=0.02, candidate_policy=0.04)  # the pull request loosens its gate
    catalog = _catalog(tmp_path, (MODEL,))
    with loopback_ingestion(tmp_path, catalog=catalog) as ingestion:
        run = _action(repo, ingestion, "7-1")
    assert run.code == 0, run.log
    assert f"modelguard: policy {POLICY_PATH} of HEAD~1: pinned" in run.log
    [report] = ingestion.published
    assert report.event.payload.workspace.model_urn == MODEL
    loaded = catalog.policy_for(MODEL)
    assert loaded is not None and loaded.policy.gate.tolerance == 0.02, "the base commit's policy, not the PR's"
    assert loaded.policy.gate.metric == "roc_auc"


def test_a_merged_change_of_a_pinned_policy_is_refused_and_nothing_is_reported(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path, (MODEL,))
    first = _repository(tmp_path / "first", base_policy=None, candidate_policy=0.02)  # the onboarding PR
    later = _repository(tmp_path / "later", base_policy=0.05, candidate_policy=0.05)  # loosened and merged
    with loopback_ingestion(tmp_path, catalog=catalog) as ingestion:
        onboarding = _action(first, ingestion, "1-1")
        refused = _action(later, ingestion, "9-1")
        reported = len(ingestion.published)
    assert onboarding.code == 0 and f"{POLICY_PATH} of HEAD: pinned" in onboarding.log, onboarding.log
    assert refused.code == 6, refused.log
    assert "model-policies answered 409" in refused.stderr and "is pinned to policy sha256:" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and TOKEN not in refused.log
    assert reported == 1, "the refused run reported no evaluation"


def test_a_model_the_platform_did_not_open_to_self_onboarding_is_refused(tmp_path: Path) -> None:
    repo = _repository(tmp_path, base_policy=0.02, candidate_policy=0.02)
    with loopback_ingestion(tmp_path, catalog=_catalog(tmp_path, ())) as ingestion:
        run = _action(repo, ingestion, "2-1")
        reported = len(ingestion.published)
    assert run.code == 6 and "model-policies answered 403" in run.stderr, run.log
    assert "policy folder" in run.stderr and reported == 0


def test_the_policy_endpoint_answers_every_case_in_one_line(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path, (MODEL, "urn:li:mlModel:(urn:li:dataPlatform:vertexai,managed,PROD)"))
    platform = yaml.safe_load(_policy(0.01)) | {
        "applies_to": ["urn:li:mlModel:(urn:li:dataPlatform:vertexai,managed,PROD)"]
    }
    (tmp_path / "policies" / "managed.yaml").write_text(yaml.safe_dump(platform))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with loopback_ingestion(tmp_path, catalog=catalog) as ingestion:

        def post(body: object, headers: dict[str, str] = auth) -> httpx.Response:
            return httpx.post(f"{ingestion.url}/model-policies", json=body, headers=headers, timeout=30)

        assert post({"model_urn": MODEL, "policy": _policy(0.02)}, {}).status_code == 401
        assert post({"model_urn": MODEL}).json() == {"error": "the body must have exactly model_urn and policy"}
        assert post({"model_urn": "urn:li:dataset:x", "policy": ""}).status_code == 422
        deep = httpx.post(f"{ingestion.url}/model-policies", content="[" * 50_000, headers=auth, timeout=30)
        assert (deep.status_code, deep.json()["error"]) == (
            422,
            'the body must be JSON: {"model_urn": "urn:li:mlModel:...", "policy": "<YAML>"}',
        )
        wide = post({"model_urn": MODEL, "policy": _policy(0.2)})
        assert wide.status_code == 422 and "wider than the central policy's onboarding.max_tolerance" in wide.text
        hostile = post({"model_urn": MODEL, "policy": _policy(0.02) + "sandbox: {allow_unconfined: true}\n"})
        assert hostile.status_code == 422 and "sandbox: set by the platform's central policy" in hostile.text
        managed = post({"model_urn": platform["applies_to"][0], "policy": _policy(0.05)})
        assert (managed.status_code, managed.json()["status"], managed.json()["policy"]) == (
            200,
            "platform",
            "managed.yaml",
        )
        first = post({"model_urn": MODEL, "policy": _policy(0.02)})
        again = post({"model_urn": MODEL, "policy": _policy(0.02)})
    assert (first.status_code, first.json()["status"]) == (201, "pinned")
    assert (again.status_code, again.json()) == (200, first.json() | {"status": "already_pinned"})
