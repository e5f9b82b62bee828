#!/usr/bin/env python3
"""Report a model's evaluation to ModelGuard from CI and wait for its verdict (the GitHub Action's step).

Standard library only, so it runs on any CI runner with Python 3.9 or newer and git. The bearer token is read
from MODELGUARD_TOKEN and never printed. It uploads `git archive` tars of the base and candidate commits and
the evaluation data, posts the EvaluationReported payload, and with --wait polls the verdict.

Exit codes: 0 the gate passed (or not waiting); 1 the gate failed (a regression ModelGuard investigated);
2 a usage, network or server error; 3 no verdict before the timeout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

EXIT_PASSED, EXIT_REGRESSED, EXIT_ERROR, EXIT_TIMEOUT = 0, 1, 2, 3


class Failure(RuntimeError):
    """One readable line for the CI log."""


def _request(url: str, method: str, token: str, body: bytes | None = None, content_type: str = "") -> Any:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read()).get("error", "")
        except ValueError:
            reason = ""
        raise Failure(f"{method} {url} answered {exc.code}: {reason or exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise Failure(f"{method} {url} failed: {getattr(exc, 'reason', exc)}") from None


def _git_archive(repository: Path, commit: str) -> tuple[str, bytes]:
    def git(*args: str) -> bytes:
        done = subprocess.run(["git", *args], cwd=repository, capture_output=True, check=False)
        if done.returncode != 0:
            raise Failure(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout

    sha = git("rev-parse", "--verify", f"{commit}^{{commit}}").decode().strip()
    return sha, git("archive", "--format=tar", sha)


def _upload(base_url: str, token: str, data: bytes, media_type: str) -> dict[str, Any]:
    digest = hashlib.sha256(data).hexdigest()
    ref: dict[str, Any] = _request(f"{base_url}/artifacts/{digest}", "PUT", token, data, media_type)
    return ref


def _metrics(path: str) -> dict[str, float]:
    try:
        document = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise Failure(f"{path}: not a readable JSON file of metrics: {exc}") from None
    if not isinstance(document, dict) or not all(isinstance(v, (int, float)) for v in document.values()):
        raise Failure(f'{path}: must be a JSON object of metric name to number, like {{"f1": 0.84}}')
    return {str(k): float(v) for k, v in document.items()}


def _output(name: str, value: str) -> None:
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(f"{name}={value}\n")


def submit(args: argparse.Namespace, token: str) -> dict[str, Any]:
    repository = Path(args.repository_path)
    base_sha, base_tar = _git_archive(repository, args.base)
    candidate_sha, candidate_tar = _git_archive(repository, args.candidate)
    try:
        data = Path(args.data).read_bytes()
    except OSError as exc:
        raise Failure(f"{args.data}: cannot read the evaluation data: {exc.strerror}") from None
    body = {
        "run_id": args.run_id,
        "workspace": {
            "model_urn": args.model_urn,
            "repository": args.repository,
            "pull_request": args.pull_request or None,
            "base_commit": base_sha,
            "candidate_commit": candidate_sha,
            "base_snapshot": _upload(args.url, token, base_tar, "application/x-tar"),
            "candidate_snapshot": _upload(args.url, token, candidate_tar, "application/x-tar"),
            "data": _upload(args.url, token, data, args.data_media_type),
        },
        "baseline_metrics": _metrics(args.baseline_metrics),
        "candidate_metrics": _metrics(args.candidate_metrics),
        "evaluation_command": args.evaluation_command.split(),
    }
    accepted: dict[str, Any] = _request(
        f"{args.url}/evaluations", "POST", token, json.dumps(body).encode(), "application/json"
    )
    return accepted


def wait(args: argparse.Namespace, token: str, verdict_url: str) -> dict[str, Any]:
    deadline = time.monotonic() + args.timeout
    while True:
        verdict: dict[str, Any] = _request(f"{args.url}{verdict_url}", "GET", token)
        if verdict.get("finished") or time.monotonic() > deadline:
            return verdict
        time.sleep(args.poll)


def _summary(verdict: dict[str, Any]) -> str:
    gate = verdict.get("gate") or {}
    figures = f" ({gate['metric']}: {gate['baseline']} -> {gate['candidate']})" if gate else ""
    outcome = f", outcome {verdict['outcome']}" if verdict.get("outcome") else ""
    run = f"{verdict['incident_id']} run {verdict['run_id']}"
    return f"ModelGuard verdict for {run}: {verdict['status']}{outcome}{figures}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="ModelGuard's ingestion base URL")
    parser.add_argument("--model-urn", required=True)
    parser.add_argument("--repository", required=True, help="owner/name")
    parser.add_argument("--repository-path", default=".")
    parser.add_argument("--base", required=True, help="base commit or ref")
    parser.add_argument("--candidate", required=True, help="candidate commit or ref")
    parser.add_argument("--baseline-metrics", required=True, help="JSON file: metric name -> number")
    parser.add_argument("--candidate-metrics", required=True, help="JSON file: metric name -> number")
    parser.add_argument("--data", required=True, help="the evaluation data file")
    parser.add_argument("--data-media-type", default="text/csv")
    parser.add_argument("--evaluation-command", required=True)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--pull-request", type=int, default=0)
    parser.add_argument("--wait", action="store_true")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--poll", type=float, default=10.0)
    args = parser.parse_args(argv)
    args.url = args.url.rstrip("/")
    token = os.environ.get("MODELGUARD_TOKEN", "")
    if not token:
        print("modelguard: MODELGUARD_TOKEN is not set", file=sys.stderr)
        return EXIT_ERROR
    try:
        accepted = submit(args, token)
        print(f"modelguard: reported run {accepted['run_id']} of incident {accepted['incident_id']}")
        _output("incident-id", accepted["incident_id"])
        if not args.wait:
            return EXIT_PASSED
        verdict = wait(args, token, accepted["verdict_url"])
    except Failure as exc:
        print(f"modelguard: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(_summary(verdict))
    _output("status", verdict["status"])
    _output("outcome", verdict.get("outcome") or "")
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as out:
            out.write(_summary(verdict) + "\n")
    if not verdict.get("finished"):
        print(f"modelguard: no verdict within {args.timeout:.0f}s", file=sys.stderr)
        return EXIT_TIMEOUT
    return EXIT_PASSED if verdict["status"] == "passed" else EXIT_REGRESSED


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
