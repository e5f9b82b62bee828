"""The Job backend's Kubernetes API calls, at unit level only, against a recorded-contract fake of the API server
(tests/support/fake_kube_api.py: requests checked and responses valid against the Kubernetes 1.30 schemas). No API
server runs on this project's machines; what a real one would add is listed in docs/deploy.md.

- the adapter creates a valid Job with the bearer token and JSON, lists the pods its controller made by the Job's
  uid, deletes it with its pods; the API's refusals come back as one line (401, RBAC's 403, 404 tolerated on delete);
- Pod Security's warning on a Job whose pods a restricted namespace would refuse ends the run at once;
- a helper image that cannot be pulled, or a pod the scheduler cannot place, is refused with the kubelet's or the
  scheduler's words, and the Job is deleted either way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from libs.policy.sandbox import SandboxLimits, SandboxPolicy
from libs.sandbox.command_start import telling
from libs.sandbox.job import pod
from libs.sandbox.job.backend import run_in_job
from libs.sandbox.job.kube_api import HttpxJobApi, KubeApiError
from libs.sandbox.job.manifest import job_manifest
from libs.sandbox.job.settings import ImageJobSettings
from libs.sandbox.remote.protocol import RunnerUnavailable
from tests.support.fake_kube_api import FakeKubeApi
from tests.unit.sandbox.test_job_manifest import HELPER, IMAGE, PLAN

TOKEN = "eyJhbGciOiJSUzI1NiJ9.test-token"
SETTINGS = ImageJobSettings(
    enabled=True, helper_image=HELPER, api_url="https://kube.test", start_timeout_s=1.5, poll_s=0.05
)
POLICY = SandboxPolicy(limits=SandboxLimits(wall_s=30, cpu_s=30))


def _api(fake: FakeKubeApi, tmp_path: Path, token: str = TOKEN) -> HttpxJobApi:
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    return HttpxJobApi("https://kube.test", token_file, None, transport=fake.transport())


def test_create_list_and_delete_a_job(tmp_path: Path) -> None:
    fake = FakeKubeApi(TOKEN)
    api = _api(fake, tmp_path)
    created = api.create_job("modelguard-jobs", job_manifest(PLAN))
    assert created.name == PLAN.name and created.uid and created.warnings == ()
    [listed] = api.job_pods("modelguard-jobs", created.uid)
    assert listed["metadata"]["ownerReferences"][0]["uid"] == created.uid
    assert listed["spec"]["containers"][0]["image"] == IMAGE
    assert api.job_pods("modelguard-jobs", "another-uid") == []
    api.delete_job("modelguard-jobs", PLAN.name)
    assert fake.deleted == [PLAN.name] and api.job_pods("modelguard-jobs", created.uid) == []
    api.delete_job("modelguard-jobs", PLAN.name)  # already gone: 404, not an error
    assert [method for method, _ in fake.requests] == ["POST", "GET", "GET", "DELETE", "GET", "DELETE"]


def test_the_token_is_read_again_for_every_request(tmp_path: Path) -> None:
    fake = FakeKubeApi(TOKEN)
    api = _api(fake, tmp_path, token="stale")
    with pytest.raises(KubeApiError, match="HTTP 401 Unauthorized") as refused:
        api.create_job("modelguard-jobs", job_manifest(PLAN))
    assert refused.value.status == 401 and "\n" not in str(refused.value)
    (tmp_path / "token").write_text(TOKEN)  # the kubelet rotated the projected token
    assert api.create_job("modelguard-jobs", job_manifest(PLAN)).uid


def test_rbac_refusals_come_back_in_one_line(tmp_path: Path) -> None:
    api = _api(FakeKubeApi(TOKEN, allowed_namespace="somewhere-else"), tmp_path)
    with pytest.raises(KubeApiError, match='cannot create resource "jobs" in API group "batch"') as refused:
        api.create_job("modelguard-jobs", job_manifest(PLAN))
    assert refused.value.status == 403 and refused.value.reason == "Forbidden"
    with pytest.raises(KubeApiError, match='cannot list resource "pods"'):
        api.job_pods("modelguard-jobs", "uid")


def test_pod_securitys_warning_is_read(tmp_path: Path) -> None:
    job = job_manifest(PLAN)
    job["spec"]["template"]["spec"]["containers"][0]["securityContext"]["runAsUser"] = 0
    created = _api(FakeKubeApi(TOKEN), tmp_path).create_job("modelguard-jobs", job)
    [warning] = created.warnings
    assert 'would violate PodSecurity "restricted:latest"' in warning and "runAsUser 0" in warning


def _revision(tmp_path: Path) -> Path:
    revision = tmp_path / "revision"
    revision.mkdir()
    (revision / "model.py").write_text("print('hello')\n")
    return revision


def _scripted(status: dict[str, Any]) -> FakeKubeApi:
    fake = FakeKubeApi(TOKEN)
    fake.on_pod = lambda made: fake.set_status(made["metadata"]["name"], status)
    return fake


def test_a_helper_image_that_cannot_be_pulled_is_refused_and_the_job_deleted(tmp_path: Path) -> None:
    waiting = {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{HELPER}"'}
    fake = _scripted(
        {
            "phase": "Pending",
            "initContainerStatuses": [
                {
                    "name": pod.RECEIVE,
                    "image": HELPER,
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"waiting": waiting},
                }
            ],
        }
    )
    with pytest.raises(RunnerUnavailable, match="ModelGuard's helper image: ImagePullBackOff: Back-off pulling"):
        run_in_job(["python", "model.py"], _revision(tmp_path), POLICY, IMAGE, SETTINGS, _api(fake, tmp_path))
    assert len(fake.deleted) == 1 and fake.jobs == {}


def test_a_pod_the_scheduler_cannot_place_times_out_with_its_reason(tmp_path: Path) -> None:
    message = "0/3 nodes are available: 3 Insufficient memory."
    fake = _scripted(
        {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}],
        }
    )
    with pytest.raises(RunnerUnavailable, match="did not get its receive role running in time: 0/3 nodes"):
        run_in_job(["python", "model.py"], _revision(tmp_path), POLICY, IMAGE, SETTINGS, _api(fake, tmp_path))
    assert len(fake.deleted) == 1


def test_a_namespace_that_would_refuse_the_pods_ends_the_run_at_once(tmp_path: Path) -> None:
    fake = FakeKubeApi(TOKEN)
    api = _api(fake, tmp_path)
    original = api.create_job

    def loosened(namespace: str, manifest: dict[str, Any]) -> Any:
        manifest["spec"]["template"]["spec"]["hostNetwork"] = True
        return original(namespace, manifest)

    api.create_job = loosened  # type: ignore[method-assign]
    with pytest.raises(RunnerUnavailable, match="the namespace refuses its pods: would violate PodSecurity"):
        run_in_job(["python", "model.py"], _revision(tmp_path), POLICY, IMAGE, SETTINGS, api)
    assert len(fake.deleted) == 1


def test_an_api_that_refuses_is_a_runner_unavailable(tmp_path: Path) -> None:
    api = _api(FakeKubeApi(TOKEN, allowed_namespace="elsewhere"), tmp_path)
    with pytest.raises(RunnerUnavailable, match="refused to run workspace code: the Kubernetes API refused"):
        run_in_job(["python", "model.py"], _revision(tmp_path), POLICY, IMAGE, SETTINGS, api)


def test_the_caller_hears_the_command_begin_as_its_job_is_asked_for(tmp_path: Path) -> None:
    """What is left of the command is the Job's work: the caller is told just before the Job is created."""
    fake = FakeKubeApi(TOKEN)
    posts_when_heard: list[int] = []

    def heard() -> None:
        posts_when_heard.append(sum(method == "POST" for method, _ in fake.requests))

    api = _api(fake, tmp_path)
    original = api.create_job

    def loosened(namespace: str, manifest: dict[str, Any]) -> Any:  # refused once created: the run ends there
        manifest["spec"]["template"]["spec"]["hostNetwork"] = True
        return original(namespace, manifest)

    api.create_job = loosened  # type: ignore[method-assign]
    with telling(heard), pytest.raises(RunnerUnavailable, match="the namespace refuses its pods"):
        run_in_job(["python", "model.py"], _revision(tmp_path), POLICY, IMAGE, SETTINGS, api)
    assert posts_when_heard == [0]  # told once, before the Job was asked for
    assert sum(method == "POST" for method, _ in fake.requests) == 1
