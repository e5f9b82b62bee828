#!/usr/bin/env python3
"""Report a model's evaluation to ModelGuard from CI and wait for its verdict (the GitHub Action's step).

Standard library only, so it runs on any CI runner with Python 3.9 or newer and git. The bearer token is read
from MODELGUARD_TOKEN and never printed. It uploads what `modelguard submit` uploads: the `git archive` tars of
the base and candidate commits and the data windows archive (the approval and incident windows, each with its
train.csv and eval.csv; packed here from four files, or given whole), posts the EvaluationReported payload
(with the CI's metrics only when given: a workspace that declares `predict` claims none, ModelGuard computes
them), and with --wait polls the verdict.

Exit codes: 0 the central policy passes the outcome (or not waiting); 1 it fails it; 2 a bad input (one line);
3 no verdict before the timeout; 4 a service dead-lettered the run's input (the reason is printed);
5 the run is stuck (nothing happened for the detector's stuck time); 6 ModelGuard refused the report or the
model's policy (--policy-file), or could not be reached.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, NoReturn

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE, EXIT_TIMEOUT = 0, 1, 2, 3
EXIT_DEAD_LETTERED, EXIT_STUCK, EXIT_SERVER = 4, 5, 6

SNAPSHOT_MEDIA_TYPE = "application/x-tar"
DATA_WINDOWS_MEDIA_TYPE = "application/vnd.modelguard.data-windows+tar"
WINDOWS = ("approval", "incident")
FILES = ("train.csv", "eval.csv")
YAML_INDICATORS = tuple("[]{}&*!|>%@`#,?:")


class BadInput(ValueError):
    """An input of the step that cannot be used: one readable line, exit 2."""


class ServerFailure(RuntimeError):
    """ModelGuard answered with an error or could not be reached: one readable line, exit 6."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not argparse's usage block
        raise BadInput(f"{message} (see --help)")


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
        except (ValueError, AttributeError):
            reason = ""
        raise ServerFailure(f"{method} {url} answered {exc.code}: {reason or exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ServerFailure(f"{method} {url} failed: {getattr(exc, 'reason', exc)}") from None


def _git(repository: Path, *args: str, missing_ok: bool = False) -> bytes | None:
    try:
        done = subprocess.run(["git", *args], cwd=repository, capture_output=True, check=False)
    except OSError as exc:
        raise BadInput(f"cannot run git in {repository}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        if missing_ok:
            return None
        said = " ".join(done.stderr.decode(errors="replace").split())
        raise BadInput(f"git {' '.join(args)}: {said}")
    return done.stdout


def _git_archive(repository: Path, commit: str) -> tuple[str, bytes]:
    sha = (_git(repository, "rev-parse", "--verify", f"{commit}^{{commit}}") or b"").decode().strip()
    return sha, _git(repository, "archive", "--format=tar", sha) or b""


def model_policy(args: argparse.Namespace) -> tuple[str, bytes] | None:
    """The model's policy file as the base commit has it (what was reviewed and merged), else as the candidate
    adds it (the pull request that onboards the model); None without --policy-file. A pull request's own edit of
    an existing policy is never what is sent: ModelGuard pins the first policy it accepts."""
    if not args.policy_file:
        return None
    path = args.policy_file.strip().lstrip("/")
    if not path or ".." in Path(path).parts:
        raise BadInput(f"--policy-file must be a path inside the repository, got {args.policy_file!r}")
    repository = Path(args.repository_path)
    for revision in (args.base, args.candidate):
        found = _git(repository, "show", f"{revision}:{path}", missing_ok=True)
        if found is not None:
            return revision, found
    raise BadInput(f"--policy-file: {path} is in neither the base nor the candidate commit")


def _upload(base_url: str, token: str, data: bytes, media_type: str) -> dict[str, Any]:
    digest = hashlib.sha256(data).hexdigest()
    ref: dict[str, Any] = _request(f"{base_url}/artifacts/{digest}", "PUT", token, data, media_type)
    return ref


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise BadInput(f"{path}: cannot read {what}: {exc.strerror or exc}") from None


def _metrics(path: str) -> dict[str, float]:
    try:
        document = json.loads(_read(path, "the metrics"))
    except ValueError as exc:
        raise BadInput(f"{path}: not a JSON file of metrics: {exc}") from None
    if not isinstance(document, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in document.values()
    ):
        raise BadInput(f'{path}: must be a JSON object of metric name to number, like {{"f1": 0.84}}')
    return {str(k): float(v) for k, v in document.items()}


def pack_data_windows(files: dict[str, dict[str, bytes]]) -> bytes:
    """The data windows archive, byte for byte as ModelGuard packs it (libs/workspace/data_windows.py)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for window in WINDOWS:
            for name in FILES:
                data = files[window][name]
                member = tarfile.TarInfo(f"{window}/{name}")
                member.size, member.mtime, member.mode = len(data), 0, 0o644
                member.uid = member.gid = 0
                member.uname = member.gname = ""
                archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def _members(archive: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """The archive's members, read one at a time: a runner's tarfile without the fix for CVE-2025-8194 (3.11.7's)
    moves past a member by its size even when negative, back to an earlier header, and getmembers() would read
    the same members again forever."""
    members = []
    for member in archive:
        if member.size < 0:
            raise tarfile.ReadError(f"{member.name!r} has a negative size ({member.size} bytes)")
        members.append(member)
    return members


def _check_data_windows(path: str, data: bytes) -> None:
    """Refuse, as one line, an archive ModelGuard would refuse; tarfile's own errors on a hostile archive are
    not all TarError, and anything but BadInput leaves the step as a traceback."""
    wanted = {f"{w}/{n}" for w in WINDOWS for n in FILES}
    unreadable = f"{path}: not a tar archive of the data windows"
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            present = {m.name.removeprefix("./") for m in _members(archive) if m.isfile()}
    except RecursionError:  # tarfile reads the header after an extended header by calling itself
        raise BadInput(f"{unreadable}: a chain of extended headers too long to follow") from None
    except OverflowError:  # a size in base 256 or in a pax header, seeked past or read as it says
        raise BadInput(f"{unreadable}: a header gives a size no archive can hold") from None
    except (tarfile.TarError, EOFError, ValueError) as exc:  # ValueError: a pax sparse map's numbers, read by int()
        raise BadInput(f"{unreadable}: {exc}") from None
    missing = sorted(wanted - present)
    if missing:
        raise BadInput(f"{path}: the data windows archive lacks {', '.join(missing)}")


def data_windows(args: argparse.Namespace) -> bytes:
    """One archive given whole, or the four window files packed here; anything else is a bad input."""
    files = {(w, n): getattr(args, f"{w}_{n.split('.')[0]}") for w in WINDOWS for n in FILES}  # --approval-train…
    given = {key: path for key, path in files.items() if path}
    if args.data_windows:
        if given:
            raise BadInput("give the data windows archive or the four window files, not both")
        data = _read(args.data_windows, "the data windows archive")
        _check_data_windows(args.data_windows, data)
        return data
    if len(given) != len(files):
        missing = [f"--{w}-{n.split('.')[0]}" for (w, n) in files if (w, n) not in given]
        raise BadInput(
            f"the data windows are missing: give --data-windows, or all four window files (missing {' '.join(missing)})"
        )
    read = {w: {n: _read(given[(w, n)], f"the {w} window's {n}") for n in FILES} for w in WINDOWS}
    return pack_data_windows(read)


def _yaml_item(text: str) -> str:
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            raise BadInput(f"--evaluation-command: cannot read the quoted item {text}") from None
        if not isinstance(value, str):
            raise BadInput(f"--evaluation-command: cannot read the quoted item {text}")
        return value
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'") or "'" in text[1:-1].replace("''", ""):
            raise BadInput(f"--evaluation-command: cannot read the quoted item {text}")
        return text[1:-1].replace("''", "'")
    if not text or text.startswith(YAML_INDICATORS) or " #" in text or ": " in text or text.endswith(":"):
        raise BadInput(f"--evaluation-command: quote the list item {text!r} (YAML would not read it as text)")
    return text


def parse_command(text: str) -> list[str]:
    """An argument list: a JSON array, a YAML block list (`- python` lines), or a plain string without quotes,
    split on whitespace."""
    stripped = text.strip()
    lines = [line.strip() for line in stripped.splitlines() if line.strip() and not line.strip().startswith("#")]
    if stripped.startswith("["):
        try:
            command = json.loads(stripped)
        except ValueError as exc:
            raise BadInput(f"--evaluation-command: not a JSON array of strings: {exc}") from None
    elif lines and all(line == "-" or line.startswith("- ") for line in lines):
        command = [_yaml_item(line[1:].strip()) for line in lines]
    elif '"' in stripped or "'" in stripped:
        raise BadInput(
            "--evaluation-command: a plain string is split on whitespace, so it cannot hold quotes; "
            'give a JSON array (["python", "predict.py", "--train", "{train}"]) or a YAML list instead'
        )
    else:
        command = stripped.split()
    if not isinstance(command, list) or not command or not all(isinstance(a, str) and a for a in command):
        raise BadInput("--evaluation-command: must be a non-empty list of non-empty strings")
    return command


def _output(name: str, value: str) -> None:
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(f"{name}={' '.join(value.split())}\n")


def report_body(args: argparse.Namespace, upload: Any) -> dict[str, Any]:
    """Read and check every input, then upload the artifacts; nothing is sent when an input is bad."""
    if bool(args.baseline_metrics) != bool(args.candidate_metrics):
        raise BadInput("give both --baseline-metrics and --candidate-metrics (a self-reported workspace), or neither")
    baseline = _metrics(args.baseline_metrics) if args.baseline_metrics else {}
    candidate = _metrics(args.candidate_metrics) if args.candidate_metrics else {}
    command = parse_command(args.evaluation_command)
    windows = data_windows(args)
    repository = Path(args.repository_path)
    base_sha, base_tar = _git_archive(repository, args.base)
    candidate_sha, candidate_tar = _git_archive(repository, args.candidate)
    return {
        "run_id": args.run_id,
        "workspace": {
            "model_urn": args.model_urn,
            "repository": args.repository,
            "pull_request": args.pull_request or None,
            "base_commit": base_sha,
            "candidate_commit": candidate_sha,
            "base_snapshot": upload(base_tar, SNAPSHOT_MEDIA_TYPE),
            "candidate_snapshot": upload(candidate_tar, SNAPSHOT_MEDIA_TYPE),
            "data": upload(windows, DATA_WINDOWS_MEDIA_TYPE),
        },
        "baseline_metrics": baseline,
        "candidate_metrics": candidate,
        "evaluation_command": command,
    }


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
    ci = f", CI {verdict['ci']}" if verdict.get("ci") else ""
    run = f"{verdict['incident_id']} run {verdict['run_id']}"
    return f"ModelGuard verdict for {run}: {verdict['status']}{outcome}{ci}{figures}"


def exit_code(verdict: dict[str, Any]) -> int:
    status = verdict.get("status")
    if status == "dead_lettered":
        return EXIT_DEAD_LETTERED
    if status == "stuck":
        return EXIT_STUCK
    if not verdict.get("finished"):
        return EXIT_TIMEOUT
    ci = verdict.get("ci") or ("pass" if status == "passed" else "fail")  # a detector without CI results
    return EXIT_PASSED if ci == "pass" else EXIT_FAILED


def _parser() -> _Parser:
    parser = _Parser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", required=True, help="ModelGuard's ingestion base URL")
    parser.add_argument("--model-urn", required=True)
    parser.add_argument("--repository", required=True, help="owner/name")
    parser.add_argument("--repository-path", default=".")
    parser.add_argument("--base", required=True, help="base commit or ref")
    parser.add_argument("--candidate", required=True, help="candidate commit or ref")
    parser.add_argument("--data-windows", default="", help="the data windows archive (approval/ and incident/)")
    for window in WINDOWS:
        for name in FILES:
            flag = f"--{window}-{name.split('.')[0]}"
            parser.add_argument(flag, default="", help=f"the {window} window's {name}")
    parser.add_argument("--baseline-metrics", default="", help="self-reported only: JSON file, metric -> number")
    parser.add_argument("--candidate-metrics", default="", help="self-reported only: JSON file, metric -> number")
    parser.add_argument("--evaluation-command", required=True, help="JSON array, YAML list, or a plain string")
    parser.add_argument(
        "--policy-file",
        default="",
        help="the model's ModelGuard policy in the repository (name, gate, workspace), sent from the base commit",
    )
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--pull-request", default="")
    parser.add_argument("--wait", action="store_true")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--poll", type=float, default=10.0)
    return parser


def _arguments(argv: list[str]) -> argparse.Namespace:
    args = _parser().parse_args(argv)
    args.url = args.url.rstrip("/")
    if not args.run_id.strip():
        raise BadInput("--run-id is empty")
    if args.pull_request and not args.pull_request.isdigit():
        raise BadInput(f"--pull-request must be a number, got {args.pull_request!r}")
    args.pull_request = int(args.pull_request or 0)
    if args.timeout < 0 or args.poll <= 0:
        raise BadInput("--timeout must be zero or more seconds and --poll more than zero")
    return args


def main(argv: list[str]) -> int:
    try:
        args = _arguments(argv)
        token = os.environ.get("MODELGUARD_TOKEN", "")
        if not token:
            raise BadInput("MODELGUARD_TOKEN is not set")
        policy = model_policy(args)
        body = report_body(args, lambda data, media_type: _upload(args.url, token, data, media_type))
        if policy is not None:
            revision, text = policy
            sent = json.dumps({"model_urn": args.model_urn, "policy": text.decode("utf-8", errors="replace")})
            answer = _request(f"{args.url}/model-policies", "POST", token, sent.encode(), "application/json")
            print(f"modelguard: policy {args.policy_file} of {revision[:12]}: {answer['status'].replace('_', ' ')}")
        accepted = _request(f"{args.url}/evaluations", "POST", token, json.dumps(body).encode(), "application/json")
        print(f"modelguard: reported run {accepted['run_id']} of incident {accepted['incident_id']}")
        _output("incident-id", accepted["incident_id"])
        if not args.wait:
            return EXIT_PASSED
        verdict = wait(args, token, accepted["verdict_url"])
    except BadInput as exc:
        print(f"modelguard: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ServerFailure as exc:
        print(f"modelguard: {exc}", file=sys.stderr)
        return EXIT_SERVER
    print(_summary(verdict))
    for name in ("status", "outcome", "ci", "reason"):
        _output(name, verdict.get(name) or "")
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as out:
            out.write(_summary(verdict) + "\n")
    code = exit_code(verdict)
    if code in (EXIT_DEAD_LETTERED, EXIT_STUCK):
        print(f"modelguard: {verdict['status'].replace('_', '-')}: {verdict.get('reason')}", file=sys.stderr)
    elif code == EXIT_TIMEOUT:
        print(f"modelguard: no verdict within {args.timeout:.0f}s", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
