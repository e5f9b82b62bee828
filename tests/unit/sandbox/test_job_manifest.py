"""The Job a workspace command runs as: valid Kubernetes 1.30 (kubernetes-validate, strict), admitted by Pod
Security ``restricted`` (tests/support/pod_security.py, which refuses the workspace runner's relaxed pod and each
single loosening of this one), and holding nothing worth stealing: no token, no Secret, no host path, no service
links, no environment for the model's container; the revision read-only there, only the output folders writable."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest

from libs.policy.sandbox import GIB, MIB, SandboxLimits
from libs.sandbox.job import pod
from libs.sandbox.job.manifest import JobPlan, job_manifest
from tests.support.helm import render
from tests.support.pod_security import restricted_violations

IMAGE = "registry.example.com/ml/churn@sha256:" + "ab" * 32
HELPER = "registry.example.com/platform/modelguard@sha256:" + "cd" * 32
PLAN = JobPlan(
    name="modelguard-ws-0123456789ab",
    namespace="modelguard-jobs",
    image=IMAGE,
    helper_image=HELPER,
    service_account="modelguard-workspace",
    token_sha256="0" * 64,
    cwd="/tmp/modelguard-incident-x/workspace/candidate",
    output_folders=("/tmp/modelguard-predictions-y", "/tmp/modelguard-predictions-y/nested"),
    limits=SandboxLimits(cpu_s=120, memory_bytes=2 * GIB, wall_s=300, output_bytes=MIB, file_size_bytes=64 * MIB),
    request_bytes=5 * MIB,
    port=8091,
    cpu="1",
    start_timeout_s=300,
    answer_margin_s=60,
)


def _pod(job: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = job["spec"]["template"]["spec"]
    return spec


def _containers(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    spec = _pod(job)
    return {c["name"]: c for c in [*spec["initContainers"], *spec["containers"]]}


def test_the_job_is_valid_kubernetes_1_30() -> None:
    job = job_manifest(PLAN)
    kubernetes_validate.validate(job, "1.30.0", strict=True)
    broken = copy.deepcopy(job)
    _pod(broken)["containers"][0]["securityContext"]["readOnlyRootFilesytem"] = True  # misspelt: strict refuses it
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.30.0", strict=True)


def test_the_pod_is_admitted_by_pod_security_restricted() -> None:
    job = job_manifest(PLAN)
    assert restricted_violations(job["spec"]["template"]["metadata"], _pod(job)) == []


def test_the_checker_refuses_the_workspace_runners_relaxed_pod() -> None:
    """The runner's Deployment as the Helm chart renders it (tests/support/helm.py: skipped without helm)."""
    [runner] = [d for d in render() if d["kind"] == "Deployment" and d["metadata"]["name"] == "modelguard-runner"]
    problems = restricted_violations(runner["spec"]["template"]["metadata"], runner["spec"]["template"]["spec"])
    assert any("seccompProfile" in p for p in problems) and any("procMount" in p for p in problems)
    assert any("appArmorProfile" in p for p in problems)


def _loosen(change: Callable[[dict[str, Any]], None]) -> list[str]:
    job = job_manifest(PLAN)
    change(_pod(job))
    return restricted_violations(job["spec"]["template"]["metadata"], _pod(job))


LOOSENINGS: dict[str, Callable[[dict[str, Any]], None]] = {
    "root": lambda spec: spec["containers"][0]["securityContext"].update(runAsUser=0),
    "escalation": lambda spec: spec["initContainers"][0]["securityContext"].pop("allowPrivilegeEscalation"),
    "capability": lambda spec: spec["containers"][1]["securityContext"]["capabilities"].update(add=["SYS_ADMIN"]),
    "no drop": lambda spec: spec["containers"][0]["securityContext"]["capabilities"].update(drop=[]),
    "seccomp": lambda spec: spec["containers"][0]["securityContext"].update(seccompProfile={"type": "Unconfined"}),
    "host path": lambda spec: spec["volumes"].append({"name": "h", "hostPath": {"path": "/"}}),
    "host network": lambda spec: spec.update(hostNetwork=True),
    "privileged": lambda spec: spec["containers"][0]["securityContext"].update(privileged=True),
    "proc mount": lambda spec: spec["containers"][0]["securityContext"].update(procMount="Unmasked"),
    "host port": lambda spec: spec["containers"][1]["ports"][0].update(hostPort=8091),
}


@pytest.mark.parametrize("loosening", sorted(LOOSENINGS))
def test_each_loosening_is_refused(loosening: str) -> None:
    assert _loosen(LOOSENINGS[loosening]) != []


def test_the_pod_holds_no_token_secret_host_path_or_service_links() -> None:
    job = job_manifest(PLAN)
    spec = _pod(job)
    assert spec["automountServiceAccountToken"] is False and spec["enableServiceLinks"] is False
    assert spec["serviceAccountName"] == "modelguard-workspace" and spec["restartPolicy"] == "Never"
    assert all(set(volume) == {"name", "emptyDir"} and volume["emptyDir"]["sizeLimit"] for volume in spec["volumes"])
    text = json.dumps(job)
    assert "secret" not in text.lower() and "valueFrom" not in text
    containers = _containers(job)
    assert "env" not in containers[pod.WORKSPACE], "the model's container gets no variable at all"
    for name in (pod.RECEIVE, pod.COLLECT):
        env = {e["name"]: e["value"] for e in containers[name]["env"]}
        assert env[pod.ENV_TOKEN_SHA256] == PLAN.token_sha256, "only the token's digest is in the Job"
        assert json.loads(env[pod.ENV_OUTPUT_FOLDERS]) == list(PLAN.output_folders)
    assert job["spec"]["backoffLimit"] == 0, "a hostile command is never retried"
    assert job["spec"]["activeDeadlineSeconds"] >= PLAN.limits.wall_s + 2 * PLAN.start_timeout_s
    assert job["spec"]["ttlSecondsAfterFinished"] > 0


def test_the_model_runs_in_its_image_reading_the_revision_and_writing_only_its_output_folders() -> None:
    containers = _containers(job_manifest(PLAN))
    workspace = containers[pod.WORKSPACE]
    assert workspace["image"] == IMAGE
    assert {containers[name]["image"] for name in (pod.RECEIVE, pod.COLLECT)} == {HELPER}
    assert workspace["command"][:3] == ["python", "-I", "-S"]
    assert workspace["workingDir"] == pod.VIEW_ROOT + PLAN.cwd
    assert workspace["securityContext"]["runAsUser"] != containers[pod.RECEIVE]["securityContext"]["runAsUser"]
    writable = {m["mountPath"] for m in workspace["volumeMounts"] if not m.get("readOnly")}
    assert writable == {
        pod.VIEW_ROOT + "/tmp/modelguard-predictions-y",
        pod.VIEW_ROOT + "/tmp/modelguard-predictions-y/nested",
        pod.RESULTS_MOUNT,
        "/tmp",
    }
    [request] = [m for m in workspace["volumeMounts"] if m["name"] == "request"]
    assert request == {"name": "request", "mountPath": pod.VIEW_ROOT, "subPath": "root", "readOnly": True}
    assert workspace["resources"]["limits"]["memory"] == str(PLAN.limits.memory_bytes)
    collector_mounts = containers[pod.COLLECT]["volumeMounts"]
    assert all(m.get("readOnly") for m in collector_mounts if m["mountPath"] != "/tmp")
