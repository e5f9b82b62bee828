"""The composite GitHub Action: well-formed, and its step, run by bash as a runner would, uploads what `modelguard
submit` uploads (the commits' `git archive` tars, the data windows archive, metrics only when given), reports,
and exits by the verdict it is served: the CI result, a dead letter, a stuck run; a bad input is one line and
exit 2, before anything is sent. The verdicts here are chosen by the test; tests/e2e/test_action_on_the_stack.py
runs the same step against the real stack."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from libs.events.codec import SignedEvent
from libs.policy.ci import CiResult
from libs.workspace.data_windows import MEDIA_TYPE, pack_data_windows
from modelguard.stack import REPO_ROOT
from services.detector.ingest_verdict import Verdict, verdict_of
from tests.support.github_action import ACTION, INPUT_REF, ActionRun, run_action
from tests.support.tar_blocks import END, extension, file_block, record
from tests.unit.deploy.loopback_ingestion import MODEL, TOKEN, LoopbackIngestion, loopback_ingestion

WINDOW_FILES = {w: {n: f"{w}/{n}" for n in ("train.csv", "eval.csv")} for w in ("approval", "incident")}


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
    for window, files in WINDOW_FILES.items():
        (repo / window).mkdir()
        for name, relative in files.items():
            (repo / relative).write_text(f"total,months,churned\n10,2,{int(name == 'eval.csv')}\n# {window}\n")
    (repo / "baseline.json").write_text('{"f1": 0.91}')
    (repo / "candidate.json").write_text('{"f1": 0.84}')
    return repo


def _action(repo: Path, ingestion: LoopbackIngestion, run_id: str, **overrides: str) -> ActionRun:
    inputs = {
        "url": ingestion.url,
        "token": TOKEN,
        "model-urn": MODEL,
        "approval-train": "approval/train.csv",
        "approval-eval": "approval/eval.csv",
        "incident-train": "incident/train.csv",
        "incident-eval": "incident/eval.csv",
        "base": "HEAD~1",
        "candidate": "HEAD",
        "repository": "acme/churn-model",
        "pull-request": "7",
        "run-id": run_id,
        "poll-seconds": "0.1",
        "timeout-seconds": "20",
    } | overrides
    return run_action(repo, repo.parent / f"runner-{run_id}", inputs, timeout_s=60)


def _finished_after_first_ask(status: str, outcome: str | None, ci: CiResult | None, reason: str | None = None) -> Any:
    asked: list[str] = []

    def verdict(incident_id: str, run_id: str, events: list[SignedEvent]) -> Verdict:
        asked.append(run_id)
        pending = verdict_of(incident_id, run_id, events)
        if len(asked) == 1:
            return pending
        gate = {"metric": "f1", "baseline": 0.91, "candidate": 0.84, "regressed": status != "passed"}
        return Verdict(incident_id, run_id, status, True, outcome, gate, pending.events, ci, reason)

    return verdict


def test_a_predict_workspace_is_reported_with_both_trees_both_windows_and_no_metrics(
    model_repository: Path, tmp_path: Path
) -> None:
    chosen = _finished_after_first_ask("published", "repair_validated", "fail")
    with loopback_ingestion(tmp_path, chosen) as ingestion:
        run = _action(model_repository, ingestion, "gh-101-1", **{"evaluation-command": "- python\n- predict.py\n"})

    assert run.code == 1, run.log
    [report] = ingestion.published
    workspace = report.event.payload.workspace
    candidate_tar = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD"], cwd=model_repository, capture_output=True, check=True
    ).stdout
    assert workspace.candidate_snapshot.sha256 == hashlib.sha256(candidate_tar).hexdigest()
    assert workspace.base_commit == _git(model_repository, "rev-parse", "HEAD~1").strip()
    files = {w: {n: model_repository / p for n, p in names.items()} for w, names in WINDOW_FILES.items()}
    assert workspace.data.media_type == MEDIA_TYPE
    assert ingestion.artifacts.get(workspace.data) == pack_data_windows(files), "packed as modelguard packs it"
    payload = report.event.payload
    assert payload.claimed is None  # the action sends EvaluationReported 1.x's two empty maps: upcast, no claim
    assert payload.evaluation_command == ["python", "predict.py"]
    assert (workspace.repository, workspace.pull_request) == ("acme/churn-model", 7)
    incident = report.event.meta.incident_id
    assert run.outputs == {
        "incident-id": incident,
        "status": "published",
        "outcome": "repair_validated",
        "ci": "fail",
        "reason": "",
    }
    assert "published, outcome repair_validated, CI fail (f1: 0.91 -> 0.84)" in run.log
    assert "CI fail" in run.summary and TOKEN not in run.log


def test_a_self_reported_workspace_sends_its_metrics_and_a_given_archive_as_it_is(
    model_repository: Path, tmp_path: Path
) -> None:
    archive = model_repository / "windows.tar"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for relative in ("approval/train.csv", "approval/eval.csv", "incident/train.csv", "incident/eval.csv"):
            tar.add(model_repository / relative, arcname=relative)
    archive.write_bytes(buffer.getvalue())
    given = {"approval-train": "", "approval-eval": "", "incident-train": "", "incident-eval": ""}
    given |= {"data-windows": "windows.tar", "baseline-metrics": "baseline.json", "candidate-metrics": "candidate.json"}
    given |= {"evaluation-command": '["python", "evaluate.py", "--train", "{train}", "--eval", "{eval}"]'}
    with loopback_ingestion(tmp_path, _finished_after_first_ask("passed", "gate_passed", "pass")) as ingestion:
        run = _action(model_repository, ingestion, "gh-102-1", **given)

    assert run.code == 0, run.log
    [report] = ingestion.published
    assert ingestion.artifacts.get(report.event.payload.workspace.data) == archive.read_bytes()
    claimed = report.event.payload.claimed  # sent in the 1.x shape (baseline_metrics, candidate_metrics), upcast
    assert claimed is not None and claimed.candidate == {"f1": 0.84}
    assert report.event.payload.evaluation_command[-2:] == ["--eval", "{eval}"]


@pytest.mark.parametrize(
    ("outcome", "ci", "code"), [("repair_validated", "pass", 0), ("gate_passed", "fail", 1), ("abstained", "fail", 1)]
)
def test_the_step_exits_by_the_ci_result_it_is_served_not_by_the_outcome(
    model_repository: Path, tmp_path: Path, outcome: str, ci: CiResult, code: int
) -> None:
    status = "passed" if outcome == "gate_passed" else "published"
    with loopback_ingestion(tmp_path, _finished_after_first_ask(status, outcome, ci)) as ingestion:
        run = _action(model_repository, ingestion, f"gh-ci-{outcome}")
    assert run.code == code, run.log
    assert run.outputs["ci"] == ci


@pytest.mark.parametrize(
    ("status", "code", "reason"),
    [
        ("dead_lettered", 4, "detector dead-lettered modelguard.evaluation-reported.v1/0@3: referee-failed: no tar"),
        ("stuck", 5, "nothing happened for 901 s since RegressionDetected from detector (a run is stuck after 900 s)"),
    ],
)
def test_a_dead_lettered_or_stuck_run_stops_the_wait_with_its_own_code_and_reason(
    model_repository: Path, tmp_path: Path, status: str, code: int, reason: str
) -> None:
    with loopback_ingestion(tmp_path, _finished_after_first_ask(status, None, None, reason)) as ingestion:
        run = _action(model_repository, ingestion, f"gh-{status}", **{"timeout-seconds": "600"})
    assert run.code == code, run.log
    assert run.stderr.strip().splitlines()[-1] == f"modelguard: {status.replace('_', '-')}: {reason}"
    assert run.outputs["status"] == status and run.outputs["reason"] == reason


def test_a_wrong_token_is_one_line_and_the_server_code(model_repository: Path, tmp_path: Path) -> None:
    with loopback_ingestion(tmp_path) as ingestion:
        refused = _action(model_repository, ingestion, "gh-103-2", token="not-the-right-token")
    assert refused.code == 6
    assert refused.stderr.strip().splitlines() == [refused.stderr.strip()]
    assert refused.stderr.strip().endswith("answered 401: missing or wrong bearer token")
    assert "not-the-right-token" not in refused.log


@pytest.mark.parametrize(
    ("overrides", "said"),
    [
        ({"incident-eval": ""}, "the data windows are missing: give --data-windows, or all four window files"),
        ({"data-windows": "baseline.json"}, "give the data windows archive or the four window files, not both"),
        ({"incident-eval": "nowhere.csv"}, "nowhere.csv: cannot read the incident window's eval.csv"),
        ({"baseline-metrics": "baseline.json"}, "give both --baseline-metrics and --candidate-metrics"),
        ({"baseline-metrics": "features.py", "candidate-metrics": "candidate.json"}, "features.py: not a JSON file"),
        ({"evaluation-command": "python predict.py --name 'a b'"}, "a plain string is split on whitespace"),
        ({"evaluation-command": "- python\n- {train}"}, "quote the list item '{train}'"),
        ({"evaluation-command": "[python, predict.py]"}, "--evaluation-command: not a JSON array of strings"),
        ({"base": "no-such-ref"}, "git rev-parse --verify no-such-ref^{commit}: fatal:"),
        ({"pull-request": "seven"}, "--pull-request must be a number"),
        ({"timeout-seconds": "soon"}, "argument --timeout: invalid float value: 'soon' (see --help)"),
    ],
)
def test_a_bad_input_is_one_line_exit_2_and_nothing_is_sent(
    model_repository: Path, tmp_path: Path, overrides: dict[str, str], said: str
) -> None:
    with loopback_ingestion(tmp_path) as ingestion:
        run = _action(model_repository, ingestion, "gh-bad", **overrides)
    assert run.code == 2, run.log
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("modelguard: ") and said in line, line
    assert "Traceback" not in run.log and ingestion.published == []
    assert not [p for p in ingestion.artifacts.root.rglob("*") if p.is_file()], "nothing uploaded"


def _gnu_member(name: str, size: int) -> bytes:
    """A member's header in GNU format, whose size field takes any number in base 256 (huge, or negative)."""
    header = tarfile.TarInfo(name)
    header.size = size
    return header.tobuf(tarfile.GNU_FORMAT)


SPARSE_MAP_UNREADABLE = b"".join(
    record(keyword, value)
    for keyword, value in [("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"), ("GNU.sparse.realsize", "0")]
)


@pytest.mark.parametrize(
    ("archive", "said"),
    [
        (
            extension(tarfile.XHDTYPE, record("path", "a")) * 3000 + file_block("approval/train.csv") + END,
            "a chain of extended headers too long to follow",
        ),
        (_gnu_member("approval/train.csv", 2**80) + END, "a header gives a size no archive can hold"),
        (extension(tarfile.XHDTYPE, record("size", "9" * 40)) + file_block("approval/train.csv") + END, "a size no"),
        (
            extension(tarfile.XHDTYPE, SPARSE_MAP_UNREADABLE) + file_block("approval/train.csv", b"x\n") + END,
            "not a tar archive of the data windows: invalid literal for int()",
        ),
    ],
    ids=["extended-header-chain", "base-256-size", "pax-size", "sparse-map"],
)
def test_a_hostile_data_windows_archive_is_one_line_exit_2_not_a_traceback(
    model_repository: Path, tmp_path: Path, archive: bytes, said: str
) -> None:
    # tarfile follows an extended header by calling itself (3,000 in a row were a RecursionError), reads a size as
    # large as the header says (an OverflowError) and a pax sparse map's numbers with int() (a ValueError): each
    # escaped the step as a traceback, since it catches only its own BadInput
    (model_repository / "hostile.tar").write_bytes(archive)
    given = {"approval-train": "", "approval-eval": "", "incident-train": "", "incident-eval": ""}
    with loopback_ingestion(tmp_path) as ingestion:
        run = _action(model_repository, ingestion, "gh-hostile", **given, **{"data-windows": "hostile.tar"})
    assert run.code == 2, run.log
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("modelguard: hostile.tar: ") and said in line, line
    assert "Traceback" not in run.log and ingestion.published == []


def test_a_data_windows_archive_whose_member_has_a_negative_size_is_refused_not_read_forever(
    model_repository: Path, tmp_path: Path
) -> None:
    # a pax size of -1536 sends tarfile (3.11.7's, without the fix for CVE-2025-8194) back to the first header, and
    # getmembers() read the same two members again, forever: the step hung until the runner's job timeout
    archive = file_block("a") + extension(tarfile.XHDTYPE, record("size", "-1536")) + file_block("approval/train.csv")
    (model_repository / "hostile.tar").write_bytes(archive + END)
    given = {"approval-train": "", "approval-eval": "", "incident-train": "", "incident-eval": ""}
    with loopback_ingestion(tmp_path) as ingestion:
        run = _action(model_repository, ingestion, "gh-negative", **given, **{"data-windows": "hostile.tar"})
    assert run.code == 2, run.log
    [line] = run.stderr.strip().splitlines()
    assert line == (
        "modelguard: hostile.tar: not a tar archive of the data windows: "
        "'approval/train.csv' has a negative size (-1536 bytes)"
    ), line
    assert ingestion.published == []


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("modelguard_ci", REPO_ROOT / "deploy/github-action/modelguard_ci.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_documented_workflows_use_declared_inputs_and_the_exit_codes_are_the_scripts() -> None:
    """docs/deploy.md's model-CI section: the e2e test's run (a predict workspace: the four windows, the policy's
    predict as a YAML list, no metrics) and the self-reported variant; the exit-code table is the script's."""
    text = (REPO_ROOT / "docs" / "deploy.md").read_text()
    section = text[text.index("## Model CI") : text.index("## What was validated here")]
    blocks = [b.split("```", 1)[0] for b in section.split("```yaml\n")[1:]]
    steps = [yaml.safe_load(b.replace("# … as above, and:", "")) for b in blocks if "acme/modelguard@v1" in b]
    uses = [s for doc in steps for s in (doc["jobs"]["modelguard"]["steps"] if "jobs" in doc else doc)]
    given = [s["with"] for s in uses if s.get("uses") == "acme/modelguard@v1"]
    assert len(given) == 2 and all(set(w) <= set(ACTION["inputs"]) for w in given)
    predict_run, self_reported = given
    churn = yaml.safe_load((REPO_ROOT / "fixtures/scenarios/churn-monthly-spend/bundle.yaml").read_text())
    script = _script()
    assert script.parse_command(predict_run["evaluation-command"]) == churn["workspace"]["predict"]
    assert not {"baseline-metrics", "candidate-metrics", "data-windows"} & set(predict_run)
    assert {"approval-train", "approval-eval", "incident-train", "incident-eval"} <= set(predict_run)
    assert {"baseline-metrics", "candidate-metrics"} <= set(self_reported)
    assert script.parse_command(self_reported["evaluation-command"])[:2] == ["python", "evaluate.py"]
    codes = {int(row.split("|")[1]) for row in section.splitlines() if re.match(r"^\| [0-9] \|", row)}
    declared = {v for k, v in vars(script).items() if k.startswith("EXIT_")}
    assert codes == declared == set(range(7))
