"""Workspace commands through the separate workspace runner: the runner really runs as its own process on
loopback (``python -m services.runner.main``, its own MODELGUARD_HOME, none of the caller's settings), and
``run_command`` is pointed at it with ``MODELGUARD_RUNNER``, as the diagnoser, validator and detector are on
Kubernetes.

- a real workspace command (the tiny bundle's ``predict`` and ``evaluate``) gives the same result remotely as
  locally, its output landing where the caller expects it;
- a hostile command run through the runner cannot read a key that exists only on the caller's side (it is never
  sent, even when the command line names it), cannot reach a TCP port the test opens, and its report says what
  was enforced and where it ran;
- a broken or hostile runner (malformed, oversized or unsafe answers, a path escape, a runner that is down or
  never answers) gives a clear failure, never a crash, and writes nothing;
- the runner refuses malformed requests with the reason.

Needs bubblewrap (CI installs it), like tests/integration/test_hostile_workspace.py."""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import os
import select
import socket
import tarfile
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from libs.policy.sandbox import GIB, MIB, SandboxLimits
from libs.sandbox.command_start import telling
from libs.sandbox.isolation import probe_isolation
from libs.sandbox.remote.protocol import answer_limit
from libs.workspace.commands import predict
from libs.workspace.data_windows import DataWindow
from libs.workspace.runner import (
    CommandNotAllowed,
    CommandResult,
    CommandTimedOut,
    SandboxUnavailable,
    require_workspace_sandbox,
    run_command,
)
from tests.support.tiny_bundle import EVALUATE_COMMAND, make_tiny_bundle
from tests.support.workspace_runner import FakeRunner, Reply, runner_process

SECRET = f"modelguard-secret-{uuid.uuid4().hex}"
LIMITS = SandboxLimits(cpu_s=30, memory_bytes=2 * GIB, wall_s=60, output_bytes=MIB, file_size_bytes=64 * 1024)
ISOLATION = probe_isolation("auto")
WRITE = """
import sys
with open(sys.argv[2], "w") as handle:
    handle.write("row_id,prediction\\n1,0\\n")
print("wrote", sys.argv[2])
"""
ATTACK = r"""
import json, os, socket, sys

targets = json.load(open("targets.json"))
secret = targets["secret_reversed"][::-1]  # not spelled out in the revision itself
root = os.getcwd()[: -len(targets["cwd"])]  # where the runner laid this command out

def read(path):
    try:
        with open(path, "rb") as handle:
            return "READ " + handle.read(4096).decode("utf-8", "replace")
    except OSError as error:
        return f"ERR {type(error).__name__}"

def found_anywhere():
    hits = []
    for folder, _, files in os.walk(root or "/nonexistent"):
        for name in files:
            if secret in read(os.path.join(folder, name)):
                hits.append(os.path.join(folder, name))
    return hits

def connect():
    try:
        socket.create_connection(("127.0.0.1", targets["port"]), timeout=5).sendall(b"hello")
        return {"connected": True}
    except OSError as error:
        return {"connected": False, "error": type(error).__name__}

key = targets["key"]
print(json.dumps({
    "key": read(key),
    "key_where_the_runner_would_put_it": read(root + key),
    "named_on_the_command_line": {path: read(path) for path in sys.argv[1:]},
    "secret_in_the_runners_folder": found_anywhere(),
    "network": connect(),
}))
"""


@pytest.fixture(autouse=True)
def _needs_bubblewrap() -> None:
    if ISOLATION.mechanism != "bwrap":
        message = f"bubblewrap unavailable: {ISOLATION.reason}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def runner_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with runner_process(tmp_path_factory.mktemp("runner-home")) as url:
        yield url


@pytest.fixture
def caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The caller's side: a MODELGUARD_HOME with a signing key, and the central policy's small limits."""
    home = tmp_path / "caller-home"
    key = home / "keys" / "validator.key"
    key.parent.mkdir(parents=True)
    key.write_text(SECRET)
    key.chmod(0o600)
    central = tmp_path / "central.yaml"
    central.write_text(yaml.safe_dump({"sandbox": {"limits": LIMITS.model_dump()}}))
    monkeypatch.setenv("MODELGUARD_HOME", str(home))
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(central))
    monkeypatch.delenv("MODELGUARD_RUNNER", raising=False)
    return home


def _use(monkeypatch: pytest.MonkeyPatch, url: str | None) -> None:
    if url is None:
        monkeypatch.delenv("MODELGUARD_RUNNER", raising=False)
    else:
        monkeypatch.setenv("MODELGUARD_RUNNER", url)


def _comparable(result: CommandResult) -> dict[str, object]:
    assert result.sandbox is not None
    report = result.sandbox.as_dict()
    for varying in ("cpu_s", "max_rss_bytes", "processes_peak", "hidden", "runner"):
        report.pop(varying)
    return {"returncode": result.returncode, "stdout": result.stdout, "stderr": result.stderr, "report": report}


# the same result remotely as locally


def test_the_tiny_bundles_evaluate_gives_the_same_result_remotely_as_locally(
    tmp_path: Path, caller: Path, monkeypatch: pytest.MonkeyPatch, runner_url: str
) -> None:
    bundle = make_tiny_bundle(tmp_path / "bundle")
    tree, data = bundle / "workspace" / "candidate", bundle / "data" / "incident"
    values = {"{train}": str(data / "train.csv"), "{eval}": str(data / "eval.csv")}
    argv = [values.get(argument, argument) for argument in EVALUATE_COMMAND]
    local = run_command(argv, cwd=tree, timeout_s=60)
    _use(monkeypatch, runner_url)
    remote = run_command(argv, cwd=tree, timeout_s=60)
    assert local.succeeded and remote.succeeded, remote.stderr
    assert json.loads(remote.stdout)["metrics"]["accuracy"] == json.loads(local.stdout)["metrics"]["accuracy"]
    assert _comparable(remote) == _comparable(local)
    assert remote.sandbox is not None and local.sandbox is not None
    assert remote.sandbox.inputs == local.sandbox.inputs == (str(data / "train.csv"), str(data / "eval.csv"))
    assert (local.sandbox.runner, remote.sandbox.runner) == ("", runner_url)


def test_the_tiny_bundles_predict_gives_the_same_predictions_remotely_as_locally(
    tmp_path: Path, caller: Path, monkeypatch: pytest.MonkeyPatch, runner_url: str
) -> None:
    bundle = make_tiny_bundle(tmp_path / "bundle", contract="predict")
    spec = yaml.safe_load((bundle / "bundle.yaml").read_text())["workspace"]
    data = bundle / "data" / "incident"
    window = DataWindow("incident", train=data / "train.csv", eval=data / "eval.csv")
    tree = bundle / "workspace" / "candidate"
    local = predict(tree, window, spec, "label")
    _use(monkeypatch, runner_url)
    remote = predict(tree, window, spec, "label")  # reads {predictions} where the caller expects the file
    assert list(remote.scored.predictions) == list(local.scored.predictions)
    assert len(remote.scored.predictions) == 200
    for run in (local, remote):
        report = run.command.sandbox
        assert report is not None and report.mechanism == "bwrap" and run.command.succeeded
        assert [Path(path).name for path in report.outputs_written] == ["predictions.csv"]
    assert remote.command.sandbox.runner == runner_url  # type: ignore[union-attr]


def test_outputs_land_in_the_callers_folder_and_the_revision_is_unchanged(
    tmp_path: Path, caller: Path, monkeypatch: pytest.MonkeyPatch, runner_url: str
) -> None:
    revision, outputs = tmp_path / "revision", tmp_path / "outputs"
    revision.mkdir()
    outputs.mkdir()
    (revision / "write.py").write_text(WRITE)
    _use(monkeypatch, runner_url)
    target = outputs / "predictions.csv"
    begun: list[str] = []
    with telling(lambda: begun.append("handed over")):  # the caller hears once its request is the runner's
        result = run_command(["python", "write.py", "--output", str(target)], cwd=revision, timeout_s=60)
    assert result.succeeded, result.stderr
    assert begun == ["handed over"]
    assert target.read_text() == "row_id,prediction\n1,0\n"
    assert result.stdout == f"wrote {target}\n", "the runner's own folder never shows in what the caller reads"
    assert result.sandbox is not None and result.sandbox.outputs_written == (str(target),)
    assert result.sandbox.workspace_changes.unchanged
    assert sorted(path.name for path in revision.iterdir()) == ["write.py"]


# a hostile command


def test_a_hostile_command_cannot_read_the_callers_key_nor_reach_its_port(
    tmp_path: Path, caller: Path, monkeypatch: pytest.MonkeyPatch, runner_url: str
) -> None:
    key = caller / "keys" / "validator.key"
    revision = tmp_path / "revision"
    revision.mkdir()
    (revision / "attack.py").write_text(ATTACK)
    _use(monkeypatch, runner_url)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        targets = {"secret_reversed": SECRET[::-1], "key": str(key), "cwd": str(revision), "port": port}
        (revision / "targets.json").write_text(json.dumps(targets))
        result = run_command(["python", "attack.py", str(key)], cwd=revision, timeout_s=60)
        readable, _, _ = select.select([listener], [], [], 0)  # the command has ended: a connection would be queued
    assert readable == [], "no connection may arrive"
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["key"].startswith("ERR") and seen["key_where_the_runner_would_put_it"].startswith("ERR")
    assert all(value.startswith("ERR") for value in seen["named_on_the_command_line"].values()), seen
    assert seen["secret_in_the_runners_folder"] == [], "the key was never sent to the runner"
    assert seen["network"]["connected"] is False
    assert SECRET not in result.stdout + result.stderr
    report = result.sandbox
    assert report is not None
    assert (report.mechanism, report.runner) == ("bwrap", runner_url)
    assert report.network_isolation.startswith("enforced") and report.filesystem_isolation.startswith("enforced")
    assert report.identity
    assert not result.succeeded, "naming a key on the command line fails the run, as it does locally"
    assert f"{key}: inside the protected {key.parent}" in (result.failure_reason or "")


def test_the_cli_check_asks_the_runner(caller: Path, monkeypatch: pytest.MonkeyPatch, runner_url: str) -> None:
    _use(monkeypatch, runner_url)
    require_workspace_sandbox()
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))  # bound, never listening: nothing answers there
        _use(monkeypatch, f"http://127.0.0.1:{unused.getsockname()[1]}")
        with pytest.raises(SandboxUnavailable, match="cannot be reached"):
            require_workspace_sandbox()


def test_a_runner_without_bubblewrap_is_not_ready_and_refuses_every_command(
    tmp_path: Path, command: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    revision, outputs = command
    (tmp_path / "runner-home").mkdir()
    with runner_process(tmp_path / "runner-home", {"PATH": str(tmp_path / "no-bwrap-here")}, wait_ready=False) as url:
        _use(monkeypatch, url)
        with pytest.raises(SandboxUnavailable, match="is not ready: refused to run workspace code"):
            require_workspace_sandbox()
        with pytest.raises(SandboxUnavailable) as refused:
            _run_through(url, monkeypatch, revision, outputs)
    assert "bwrap not installed" in str(refused.value) and f"on the workspace runner at {url}" in str(refused.value)
    assert list(outputs.iterdir()) == []


def test_commands_beyond_the_runners_slots_wait_for_one(
    tmp_path: Path, command: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    revision, _ = command
    (revision / "slow.py").write_text("import sys, time\ntime.sleep(1)\nprint(sys.argv[1])\n")
    (tmp_path / "runner-home").mkdir()
    with runner_process(tmp_path / "runner-home", {"MODELGUARD_RUNNER_CONCURRENCY": "1"}) as url:
        _use(monkeypatch, url)
        with ThreadPoolExecutor(max_workers=3) as pool:
            runs = list(pool.map(lambda n: run_command(["python", "slow.py", str(n)], revision, 60), range(3)))
    assert [run.stdout for run in runs] == ["0\n", "1\n", "2\n"] and all(run.succeeded for run in runs)


# a broken or hostile runner


def _members(parcel: bytes) -> list[tuple[tarfile.TarInfo, bytes]]:
    with tarfile.open(fileobj=io.BytesIO(parcel), mode="r:") as archive:
        return [(member, (archive.extractfile(member) or io.BytesIO()).read()) for member in archive.getmembers()]


def _parcel(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for member, data in members:
            member.size = len(data) if member.isfile() else 0
            archive.addfile(member, io.BytesIO(data) if member.isfile() else None)
    return buffer.getvalue()


def _relayed(url: str, body: bytes) -> bytes:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=120)
    connection.request("POST", "/v1/commands", body, {"Content-Type": "application/x-tar"})
    answer = connection.getresponse().read()
    connection.close()
    return answer


def _tampered(url: str, change: Callable[[list[tuple[tarfile.TarInfo, bytes]]], None]) -> Callable[[bytes], Reply]:
    """A runner that relays to the real one and changes its answer."""

    def answer(body: bytes) -> Reply:
        members = _members(_relayed(url, body))
        change(members)
        return Reply(body=_parcel(members))

    return answer


def _manifest(change: Callable[[dict[str, object]], None]) -> Callable[[list[tuple[tarfile.TarInfo, bytes]]], None]:
    def edit(members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
        document = json.loads(members[0][1])
        change(document)
        members[0] = (members[0][0], json.dumps(document).encode())

    return edit


@pytest.fixture
def command(tmp_path: Path, caller: Path) -> tuple[Path, Path]:
    """A revision whose command writes one output file, and that file's folder."""
    revision, outputs = tmp_path / "revision", tmp_path / "outputs"
    revision.mkdir()
    outputs.mkdir()
    (revision / "write.py").write_text(WRITE)
    return revision, outputs


def _run_through(url: str, monkeypatch: pytest.MonkeyPatch, revision: Path, outputs: Path) -> CommandResult:
    _use(monkeypatch, url)
    return run_command(["python", "write.py", "--output", str(outputs / "out.csv")], cwd=revision, timeout_s=30)


def _escape_to(target: Path) -> Callable[[dict[str, object]], None]:
    def change(document: dict[str, object]) -> None:
        document["outputs"][0]["path"] = str(target)  # type: ignore[index]

    return change


def _link_member(members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
    link = tarfile.TarInfo("outputs/0")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    members[-1] = (link, b"")


def _other_bytes(members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
    members[-1] = (members[-1][0], b"row_id,prediction\n1,1\n")


def _unconfined(document: dict[str, object]) -> None:
    document["report"]["mechanism"] = "none"  # type: ignore[index]


def _wider_limits(document: dict[str, object]) -> None:
    document["report"]["limits"]["wall_s"] = 10_000  # type: ignore[index]


def _extra_field(document: dict[str, object]) -> None:
    document["verdict"] = "trust me"


CASES = {
    "a path outside the output folders": (lambda tmp: _manifest(_escape_to(tmp / "escaped.csv")), "outside"),
    "a path with ..": (lambda tmp: _manifest(_escape_to(Path(f"{tmp}/outputs/../escaped.csv"))), "normalised"),
    "a link instead of a file": (lambda tmp: _link_member, "not a regular file"),
    "bytes that do not match the digest": (lambda tmp: _other_bytes, "does not match"),
    "a claim it ran unconfined": (lambda tmp: _manifest(_unconfined), "without a sandbox"),
    "other limits than the caller's": (lambda tmp: _manifest(_wider_limits), "other limits"),
    "a field the format does not have": (lambda tmp: _manifest(_extra_field), "Extra inputs"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_unsafe_answer_is_refused_whole_and_writes_nothing(
    case: str,
    tmp_path: Path,
    command: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    runner_url: str,
) -> None:
    revision, outputs = command
    change, words = CASES[case]
    with FakeRunner(_tampered(runner_url, change(tmp_path))) as fake, pytest.raises(CommandNotAllowed) as raised:
        _run_through(fake.url, monkeypatch, revision, outputs)
    assert "the workspace runner" in str(raised.value) and words in str(raised.value), str(raised.value)
    assert list(outputs.iterdir()) == [] and not (tmp_path / "escaped.csv").exists()


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (Reply(body=b"this is not a tar"), "malformed"),
        (Reply(body=b""), "malformed"),
        (Reply(headers={"Content-Type": "text/html"}, body=b"<html>"), "not a parcel"),
        (Reply(headers={"Content-Type": "application/x-tar", "Content-Length": str(10 * GIB)}, length=False), "10737"),
        (Reply(length=False, zeros=answer_limit(LIMITS) + MIB), "exceeds"),
        (Reply(status=502, headers={"Content-Type": "text/html"}, body=b"Bad Gateway"), "answered HTTP 502"),
        (Reply(status=503, body=b'{"refused": "busy", "reason": "every slot taken"}'), "every slot taken"),
    ],
    ids=["garbage", "empty", "not-a-parcel", "declared-too-large", "streamed-too-large", "http-502", "busy"],
)
def test_a_malformed_or_oversized_answer_is_a_clear_failure(
    reply: Reply, words: str, command: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    revision, outputs = command
    with FakeRunner(lambda body: reply) as fake, pytest.raises(CommandNotAllowed) as raised:
        _run_through(fake.url, monkeypatch, revision, outputs)
    assert words in str(raised.value), str(raised.value)
    assert list(outputs.iterdir()) == []


def test_a_runner_that_is_down_is_a_clear_failure(command: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    revision, outputs = command
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused, no one else gets the port
        url = f"http://127.0.0.1:{unused.getsockname()[1]}"
        with pytest.raises(CommandNotAllowed, match="cannot be reached") as raised:
            _run_through(url, monkeypatch, revision, outputs)
    assert url in str(raised.value) and str(raised.value).startswith("refused to run workspace code")


def test_a_runner_that_does_not_answer_in_time_is_a_timeout_with_the_reason(
    command: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    revision, outputs = command
    monkeypatch.setenv("MODELGUARD_RUNNER_MARGIN_S", "0.5")
    with FakeRunner(hold=True) as fake:
        _use(monkeypatch, fake.url)
        with pytest.raises(CommandTimedOut) as raised:
            run_command(["python", "write.py", "--output", str(outputs / "out.csv")], cwd=revision, timeout_s=0.5)
    assert f"the workspace runner at {fake.url} did not answer within 1.5 s" in str(raised.value)  # queue, run, margin
    assert "did not answer" in raised.value.stderr
    assert list(outputs.iterdir()) == []


# the runner's side: malformed requests


def _post(url: str, body: bytes, kind: str = "application/x-tar") -> tuple[int, dict[str, str]]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    connection.request("POST", "/v1/commands", body, {"Content-Type": kind})
    response = connection.getresponse()
    document = json.loads(response.read())
    connection.close()
    return response.status, document


def _request_parcel(manifest: dict[str, object], revision: bytes) -> bytes:
    def member(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
        return tarfile.TarInfo(name), data

    return _parcel([member("request.json", json.dumps(manifest).encode()), member("revision.tar", revision)])


def _tree(*members: tarfile.TarInfo) -> bytes:
    return _parcel([(member, b"x" if member.isfile() else b"") for member in members])


def _manifest_for(tree: bytes, changes: dict[str, object]) -> dict[str, object]:
    document: dict[str, object] = {
        "protocol": 1,
        "argv": ["python", "-c", "print(1)"],
        "cwd": "/work/revision",
        "policy": {},
        "revision": {"sha256": hashlib.sha256(tree).hexdigest(), "size": len(tree)},
    }
    document.update(changes)
    return document


def _symlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


@pytest.mark.parametrize(
    ("revision", "changes", "words"),
    [
        (_tree(tarfile.TarInfo("../escape.py")), {}, "unsafe member name"),
        (_tree(tarfile.TarInfo("/etc/escape.py")), {}, "unsafe member name"),
        (_tree(_symlink("out", "/etc")), {}, "points out of the tree"),
        (_tree(_symlink("out", "../.."), tarfile.TarInfo("inside.py")), {}, "points out of the tree"),
        (_tree(_symlink("link", "sub"), tarfile.TarInfo("link/through.py")), {}, "not a folder"),
        (_tree(tarfile.TarInfo("a.py")), {"cwd": "/work/../etc"}, "normalised"),
        (_tree(tarfile.TarInfo("a.py")), {"output_folders": ["/work/revision/out"]}, "overlaps the working"),
        (_tree(tarfile.TarInfo("a.py")), {"argv": []}, "argv"),
        (_tree(tarfile.TarInfo("a.py")), {"revision": {"sha256": "0" * 64, "size": 1}}, "does not match"),
    ],
    ids=[
        "dotdot",
        "absolute",
        "link-out",
        "link-up",
        "through-link",
        "cwd-in-etc",
        "output-in-cwd",
        "no-argv",
        "digest",
    ],
)
def test_the_runner_refuses_a_malformed_request_with_the_reason(
    revision: bytes, changes: dict[str, object], words: str, runner_url: str
) -> None:
    status, document = _post(runner_url, _request_parcel(_manifest_for(revision, changes), revision))
    assert (status, document["refused"]) == (400, "bad_request"), document
    assert words in document["reason"], document


def test_the_runner_refuses_what_is_not_a_parcel(runner_url: str) -> None:
    assert _post(runner_url, b"garbage")[1]["refused"] == "bad_request"
    status, document = _post(runner_url, b"{}", kind="application/json")
    assert (status, document["refused"]) == (400, "bad_request") and "parcel" in document["reason"]
