"""Workspace commands in the model's own image, as a Kubernetes Job, with every part that can run on one machine
running for real: ``run_command`` with the model policy's image and ``MODELGUARD_IMAGE_JOBS=kubernetes`` creates the
Job through the real adapter over real HTTP; the pod's three containers run as local processes
(tests/support/local_kubelet.py: bubblewrap gives each the file system its spec asks for: its image's files, its
volume mounts, a read-only root, its uid when the tests run as root), and the model's container is an interpreter
with nothing of ModelGuard in it (the system's python3).

Not a cluster: the API server is the recorded-contract fake (tests/support/fake_kube_api.py) and the kubelet does
not pull images, enforce resources or NetworkPolicy (the pod shares the machine's loopback). docs/deploy.md says
what has not run on a cluster.

- the tiny bundle's ``predict`` gives the same predictions in the model's image as in ModelGuard's own sandbox;
- a hostile command there cannot import ModelGuard, read the caller's key (never sent), write its revision, get
  the answer without the Job's token, or see a token or variable of the caller's; its run fails for the secret it
  named; the Job is deleted;
- an image the kubelet cannot pull ends as an environment failure; the wall time holds in the image."""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from libs.policy.sandbox import GIB, MIB, SandboxLimits
from libs.sandbox.isolation import probe_isolation
from libs.workspace.commands import predict
from libs.workspace.data_windows import DataWindow
from libs.workspace.runner import CommandTimedOut, EnvironmentUnavailable, run_command
from modelguard.stack import REPO_ROOT
from tests.support.fake_kube_api import FakeKubeApi, served_on_loopback
from tests.support.foreign_python import foreign_python
from tests.support.local_kubelet import LocalKubelet, model_image, modelguard_image
from tests.support.tiny_bundle import make_tiny_bundle

DIGEST = "sha256:" + "5e" * 32
MODEL_IMAGE = f"registry.example.com/ml/tiny-threshold@{DIGEST}"
HELPER_IMAGE = f"registry.example.com/platform/modelguard@{DIGEST}"
TOKEN = f"kube-token-{uuid.uuid4().hex}"
SECRET = f"modelguard-secret-{uuid.uuid4().hex}"
LIMITS = SandboxLimits(cpu_s=60, memory_bytes=2 * GIB, wall_s=120, output_bytes=MIB, file_size_bytes=16 * MIB)
HOSTILE = r"""
import importlib.util, json, os, sys, time, urllib.request, urllib.error

targets = json.load(open("targets.json"))

def attempt(action):
    try:
        return action()
    except Exception as error:
        return f"ERR {type(error).__name__}"

def write_revision():
    with open("planted.py", "w") as handle:
        handle.write("x = 1")
    return "WROTE"

def answer_without_token():
    url = f"http://127.0.0.1:{targets['port']}/v1/answer"
    for _ in range(100):  # the collector starts beside this container: wait until it listens
        try:
            urllib.request.urlopen(url, timeout=5)
            return "GOT THE ANSWER"
        except urllib.error.HTTPError as error:
            return error.code
        except urllib.error.URLError:
            time.sleep(0.1)
    return "never listened"

def everything_readable():
    found = []
    for top in ("/modelguard", "/tmp"):
        for folder, _, files in os.walk(top):
            found += [os.path.join(folder, name) for name in files]
    return found

with open(sys.argv[-1], "w") as handle:
    handle.write("row_id,prediction\n")
print(json.dumps({
    "importable": [n for n in ("libs", "services", "modelguard", "pydantic") if importlib.util.find_spec(n)],
    "executable": sys.executable,
    "key": attempt(lambda: open(targets["key"]).read()),
    "secrets": os.path.exists("/var/run/secrets/kubernetes.io"),
    "write_revision": attempt(write_revision),
    "answer_without_token": attempt(answer_without_token),
    "environ": sorted(os.environ),
    "files": everything_readable(),
    "uid": os.getuid(),
}))
"""


@pytest.fixture(autouse=True)
def _needs_bubblewrap() -> None:
    isolation = probe_isolation("auto")
    if isolation.mechanism != "bwrap":
        message = f"bubblewrap unavailable: {isolation.reason}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    foreign_python()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Cluster:
    def __init__(self, api: FakeKubeApi, kubelet: LocalKubelet, port: int, home: Path) -> None:
        self.api, self.kubelet, self.port, self.home = api, kubelet, port, home


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cluster]:
    home = tmp_path / "caller-home"
    key = home / "keys" / "validator.key"
    key.parent.mkdir(parents=True)
    key.write_text(SECRET)
    key.chmod(0o600)
    token_file = home / "kube-token"
    token_file.write_text(TOKEN)
    central = tmp_path / "central.yaml"
    central.write_text(
        yaml.safe_dump(
            {"sandbox": {"limits": LIMITS.model_dump()}, "workspace_images": {"allowed": ["registry.example.com/ml/"]}}
        )
    )
    api = FakeKubeApi(TOKEN)
    work = tmp_path / "node"
    images = {MODEL_IMAGE: model_image(work), HELPER_IMAGE: modelguard_image(REPO_ROOT)}
    kubelet = LocalKubelet(api, images, work)
    port = _free_port()
    with served_on_loopback(api) as url:
        for name, value in {
            "MODELGUARD_HOME": str(home),
            "MODELGUARD_CENTRAL_POLICY": str(central),
            "MODELGUARD_IMAGE_JOBS": "kubernetes",
            "MODELGUARD_JOB_HELPER_IMAGE": HELPER_IMAGE,
            "MODELGUARD_JOB_API_URL": url,
            "MODELGUARD_JOB_TOKEN_FILE": str(token_file),
            "MODELGUARD_JOB_PORT": str(port),
            "MODELGUARD_JOB_POLL_S": "0.1",
            "MODELGUARD_JOB_START_TIMEOUT_S": "60",
            "MODELGUARD_JOB_ANSWER_MARGIN_S": "30",
        }.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("MODELGUARD_RUNNER", raising=False)
        try:
            yield Cluster(api, kubelet, port, home)
        finally:
            kubelet.close()


def test_the_tiny_bundles_predict_gives_the_same_predictions_in_the_models_image(
    tmp_path: Path, cluster: Cluster
) -> None:
    bundle = make_tiny_bundle(tmp_path / "bundle", contract="predict")
    spec = yaml.safe_load((bundle / "bundle.yaml").read_text())["workspace"]
    data = bundle / "data" / "incident"
    window = DataWindow("incident", train=data / "train.csv", eval=data / "eval.csv")
    tree = bundle / "workspace" / "candidate"
    local = predict(tree, window, spec, "label")
    in_image = predict(tree, window, {**spec, "image": MODEL_IMAGE}, "label")
    assert in_image.command.succeeded, in_image.command.stderr
    assert list(in_image.scored.predictions) == list(local.scored.predictions)
    assert len(in_image.scored.predictions) == 200
    report = in_image.command.sandbox
    assert report is not None and report.mechanism == "kubernetes-job" and local.command.sandbox is not None
    assert report.runner.startswith("kubernetes job modelguard-jobs/modelguard-ws-") and MODEL_IMAGE in report.runner
    assert [Path(path).name for path in report.outputs_written] == ["predictions.csv"]
    sent, shown = ([Path(p).name for p in r.inputs] for r in (report, local.command.sandbox))
    assert sent == shown == ["train.csv", "features.csv"], "the inputs the sandbox shows are the ones sent"
    assert report.limits == LIMITS.narrowed(wall_s=float(spec.get("timeout_s", 300)))
    [job] = cluster.api.deleted
    assert job in report.runner and cluster.api.jobs == {}, "the Job is deleted once the answer is in"


def test_a_hostile_command_in_the_image_reaches_nothing_of_modelguards(tmp_path: Path, cluster: Cluster) -> None:
    revision, outputs = tmp_path / "revision", tmp_path / "outputs"
    revision.mkdir()
    outputs.mkdir()
    key = cluster.home / "keys" / "validator.key"
    (revision / "attack.py").write_text(HOSTILE)
    (revision / "targets.json").write_text(json.dumps({"key": str(key), "port": cluster.port}))
    target = outputs / "predictions.csv"
    result = run_command(
        ["python", "attack.py", str(key), "--output", str(target)], cwd=revision, timeout_s=60, image=MODEL_IMAGE
    )
    seen = json.loads(result.stdout)
    assert seen["importable"] == [], "nothing of ModelGuard's in the model's image"
    assert seen["executable"].endswith("/python") and not seen["executable"].startswith(str(REPO_ROOT))
    assert seen["key"].startswith("ERR"), "the caller's key was never sent"
    assert not any(SECRET in path or "validator.key" in path for path in seen["files"])
    assert seen["secrets"] is False, "no service-account token in the pod"
    assert seen["write_revision"] == "ERR OSError", "the revision is read-only"
    assert seen["answer_without_token"] == 401, "the collector answers only the Job's creator"
    assert not [n for n in seen["environ"] if "TOKEN" in n or n.startswith(("MODELGUARD", "KUBERNETES"))]
    assert all(TOKEN not in Path(path).name for path in seen["files"])
    if os.getuid() == 0:
        assert seen["uid"] == 65534, "the command's uid, not the helpers'"
    assert target.read_text() == "row_id,prediction\n", "its declared output came back"
    assert result.sandbox is not None and not result.succeeded
    assert any(str(key) in refused for refused in result.sandbox.refused_inputs)
    assert "the sandbox did not show these arguments" in (result.failure_reason or "")
    assert not (revision / "planted.py").exists() and len(cluster.api.deleted) == 1


def test_an_image_the_node_cannot_pull_ends_as_an_environment_failure(tmp_path: Path, cluster: Cluster) -> None:
    missing = f"registry.example.com/ml/not-pushed@{DIGEST}"
    (tmp_path / "revision").mkdir()
    with pytest.raises(EnvironmentUnavailable, match="could not be pulled: ErrImagePull") as failed:
        run_command(["python", "-V"], cwd=tmp_path / "revision", timeout_s=60, image=missing)
    assert failed.value.declaration == f"image {missing}"
    assert len(cluster.api.deleted) == 1 and cluster.api.jobs == {}


def test_the_wall_time_holds_in_the_image(tmp_path: Path, cluster: Cluster) -> None:
    revision = tmp_path / "revision"
    revision.mkdir()
    (revision / "sleep.py").write_text("import time\nprint('started', flush=True)\ntime.sleep(120)\n")
    with pytest.raises(CommandTimedOut) as timed_out:
        run_command(["python", "sleep.py"], cwd=revision, timeout_s=3, image=MODEL_IMAGE)
    assert timed_out.value.sandbox is not None and timed_out.value.sandbox.limit_exceeded == "wall_time"
    assert timed_out.value.stdout == "started\n"
