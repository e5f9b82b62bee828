"""The workspace Job pod's two ModelGuard roles and what the caller makes of their answer, piece by piece:

- the receiver answers nobody without the Job's token (401, and it keeps waiting), and refuses a request that is
  not the command its Job was made for (the pod's mounts were built from the Job's working directory and output
  folders);
- the collector sends back only regular files of the output folders, never through a link, within the caps, and
  reads the launcher's status as the hostile file it may be;
- the caller believes the kubelet over the launcher: an OOM kill is the memory limit, an exit code that disagrees
  with the status (or no status at all) fails the run."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from libs.policy.sandbox import SandboxLimits, SandboxPolicy
from libs.sandbox.job import pod
from libs.sandbox.job.pod_status import ContainerState
from libs.sandbox.job.report import NO_STATUS, job_outcome
from libs.sandbox.protected_paths import protected_paths
from libs.sandbox.remote.answer import Accepted
from libs.sandbox.remote.protocol import PARCEL_TYPE
from libs.sandbox.remote.request import write_request
from libs.sandbox.remote.shipment import plan_shipment
from libs.sandbox.report import SandboxReport
from services.runner.job_pod.answer import collect_outputs, read_status
from services.runner.job_pod.layout import PodVolumes
from services.runner.job_pod.one_shot import OneShotServer, Reply, token_matches
from services.runner.job_pod.receive import receiver

TOKEN = "job-token-1"


def test_only_the_jobs_token_is_accepted() -> None:
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    assert token_matches(f"Bearer {TOKEN}", digest) and token_matches(f"bearer  {TOKEN} ", digest)
    for header in (None, "", TOKEN, f"Basic {TOKEN}", "Bearer other", f"Bearer {digest}"):
        assert not token_matches(header, digest)


@pytest.fixture
def receiving(tmp_path: Path) -> Iterator[tuple[OneShotServer, list[Reply | None]]]:
    volumes = PodVolumes(tmp_path / "request", tmp_path / "outputs", tmp_path / "plan")
    for folder in (volumes.request, volumes.outputs, volumes.plan):
        folder.mkdir()
    environment = {
        pod.ENV_CWD: "/work/revision",
        pod.ENV_OUTPUT_FOLDERS: "[]",
        pod.ENV_TOKEN_SHA256: hashlib.sha256(TOKEN.encode()).hexdigest(),
    }
    server = OneShotServer(
        0, environment[pod.ENV_TOKEN_SHA256], {("POST", pod.RECEIVE_PATH): receiver(environment, volumes)}
    )
    outcome: list[Reply | None] = []
    thread = threading.Thread(target=lambda: outcome.append(server.serve_until(30)), daemon=True)
    thread.start()
    yield server, outcome
    thread.join(timeout=30)
    server.server_close()


def _post(server: OneShotServer, body: bytes, token: str | None) -> tuple[int, dict[str, str]]:
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
    headers = {"Content-Type": PARCEL_TYPE, "Content-Length": str(len(body))}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    connection.request("POST", pod.RECEIVE_PATH, body=body, headers=headers)
    response = connection.getresponse()
    answer = json.loads(response.read())
    connection.close()
    return response.status, answer


def _request_elsewhere(tmp_path: Path) -> bytes:
    """A valid request parcel, for a working directory other than the Job's."""
    revision, work = tmp_path / "elsewhere", tmp_path / "work"
    revision.mkdir()
    work.mkdir()
    (revision / "model.py").write_text("print(1)\n")
    protected = protected_paths(())
    shipment = plan_shipment(["python", "model.py"], revision, protected, [])
    return write_request(shipment, SandboxPolicy(), protected, work).parcel.read_bytes()


def test_the_receiver_answers_nobody_without_the_token_and_refuses_another_command(
    receiving: tuple[OneShotServer, list[Reply | None]], tmp_path: Path
) -> None:
    server, outcome = receiving
    assert _post(server, b"x", None)[0] == 401
    assert _post(server, b"x", "guess")[0] == 401
    assert outcome == [], "still waiting for its caller"
    status, refusal = _post(server, _request_elsewhere(tmp_path), TOKEN)
    assert status == 400 and refusal["refused"] == "bad_request"
    assert "not the ones this Job was made for" in refusal["reason"]
    deadline = time.monotonic() + 30
    while not outcome and time.monotonic() < deadline:
        time.sleep(0.05)
    [ended] = outcome
    assert ended is not None and ended.failed, "a refused request ends the role: the Job is never retried"
    assert not (tmp_path / "request" / "root").exists() and os.listdir(tmp_path / "plan") == []


def test_the_collector_sends_only_regular_files_never_through_a_link(tmp_path: Path) -> None:
    outputs = tmp_path / "outputs"
    (outputs / "0" / "sub").mkdir(parents=True)
    (outputs / "0" / "predictions.csv").write_text("row_id,prediction\n")
    (outputs / "0" / "sub" / "extra.txt").write_text("x")
    (outputs / "0" / "passwd").symlink_to("/etc/passwd")
    (outputs / "0" / "linked").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(outputs / "0" / "pipe")
    (outputs / "0" / "big.bin").write_bytes(b"x" * 2048)
    plan = {"outputs": [{"path": "/tmp/out", "folder": "0"}]}
    sent, refused = collect_outputs(plan, outputs, tmp_path / "copies", SandboxLimits(file_size_bytes=1024))
    assert sorted(path for _, path in sent) == ["/tmp/out/predictions.csv", "/tmp/out/sub/extra.txt"]
    assert all(copy.is_relative_to(tmp_path / "copies") for copy, _ in sent)
    reasons = dict(line.split(": ", 1) for line in refused)
    assert reasons["/tmp/out/passwd"] == "a link" and reasons["/tmp/out/linked"] == "a link"
    assert reasons["/tmp/out/pipe"] == "not a regular file"
    assert reasons["/tmp/out/big.bin"].startswith("larger than the 1024 bytes")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        '{"returncode": "0"}',
        '{"returncode": 999, "duration_s": 1, "cpu_s": 1, "max_rss_bytes": 1, "killed_for": null}',
        '{"returncode": 0, "duration_s": "NaN", "cpu_s": 1, "max_rss_bytes": 1, "killed_for": null}',
        '{"returncode": 0, "duration_s": 1, "cpu_s": 1, "max_rss_bytes": 1, "killed_for": "memory"}',
        "[" * 30_000 + "]" * 30_000,  # within the 64 KiB cap, past the JSON parser's depth
    ],
)
def test_a_status_that_does_not_read_as_the_launchers_is_none(tmp_path: Path, text: str) -> None:
    (tmp_path / "status.json").write_text(text)
    assert read_status(tmp_path / "status.json") is None


def _accepted(returncode: int, ending: str, limit: str | None = None) -> Accepted:
    report = SandboxReport(
        mechanism="kubernetes-job",
        network_isolation="",
        filesystem_isolation="",
        process_limit="",
        limits=SandboxLimits(),
        limit_exceeded=limit,  # type: ignore[arg-type]
        ending=ending,
        cpu_s=1.0,
        max_rss_bytes=1,
    )
    return Accepted(returncode, 1.0, report, "", "", (), ())


def _ended(code: int, reason: str = "") -> ContainerState:
    return ContainerState(state="terminated", exit_code=code, reason=reason or ("Completed" if code == 0 else "Error"))


def test_the_kubelet_is_believed_over_the_launcher() -> None:
    assert job_outcome(_accepted(0, "exit 0"), _ended(0))[0] == 0
    returncode, report = job_outcome(_accepted(-9, "killed by SIGKILL", "wall_time"), _ended(137))
    assert (returncode, report.limit_exceeded) == (-9, "wall_time"), "they agree: the launcher's account stands"
    returncode, report = job_outcome(_accepted(-9, "killed by SIGKILL"), _ended(137, "OOMKilled"))
    assert report.limit_exceeded == "memory"
    returncode, report = job_outcome(_accepted(0, "exit 0"), _ended(1))
    assert returncode == 1 and "not as the launcher's status says" in report.ending
    returncode, report = job_outcome(_accepted(0, "exit 0"), _ended(137, "OOMKilled"))
    assert (returncode, report.limit_exceeded) == (137, "memory")
    returncode, report = job_outcome(_accepted(1, NO_STATUS), _ended(0))
    assert returncode == 1, "no status fails the run even when the container exited 0"
    assert report.failure_reason(returncode) is not None
