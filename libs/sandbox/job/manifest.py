"""The Kubernetes Job one workspace command runs as (``pod.py`` says what each container does): a plain function
from what the caller decided to the manifest it creates. Pod Security ``restricted`` throughout (the Job's
namespace enforces it): every container non-root, no privilege escalation, every capability dropped, the runtime's
default seccomp profile, a read-only root file system; no service-account token, no service links, no Secret, no
host path; only emptyDir volumes, each with a size limit; resource requests and limits from the sandbox policy;
never retried (``backoffLimit: 0``), ended by the kubelet past its deadline, removed after it finishes."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from libs.policy.sandbox import MIB, SandboxLimits
from libs.sandbox.job import pod
from libs.sandbox.remote.protocol import MAX_OUTPUTS_BYTES, UTF8_EXPANSION

APP = "modelguard-workspace-job"
HELPER_RESOURCES = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}}
TTL_AFTER_FINISHED_S = 300
"""A Job the caller could not delete (it died) is removed this long after it ends."""
GRACE_S = 5


@dataclass(frozen=True)
class JobPlan:
    name: str
    namespace: str
    image: str
    """The model's image, allowed by the central policy (``image_policy.py``)."""
    helper_image: str
    """ModelGuard's own image, for the receive and collect roles."""
    service_account: str
    token_sha256: str
    cwd: str
    """The caller's working directory (the revision)."""
    output_folders: tuple[str, ...]
    limits: SandboxLimits
    request_bytes: int
    port: int
    cpu: str
    """The workspace container's CPU request and limit (cores, Kubernetes quantity)."""
    start_timeout_s: float
    """How long the pod may take to be scheduled and pulled, each time an image is pulled."""
    answer_margin_s: float


def _security(uid: int) -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": uid,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _quantity(size: int) -> str:
    return f"{max(1, math.ceil(size / MIB))}Mi"


def _deadline_s(plan: JobPlan) -> int:
    """The whole pod: scheduled and receiving, the model's image pulled, the command, the answer."""
    return math.ceil(2 * plan.start_timeout_s + plan.limits.wall_s + plan.answer_margin_s)


def _volumes(plan: JobPlan) -> list[dict[str, Any]]:
    limits = plan.limits
    sizes = {
        # the parcel as received, its members as read out of it, and the trees they unpack to
        "request": 3 * plan.request_bytes + 64 * MIB,
        "outputs": 2 * MAX_OUTPUTS_BYTES,
        "plan": 16 * MIB,
        "results": 2 * limits.output_bytes + MIB,
        "scratch": limits.file_size_bytes + 64 * MIB,
        # the collector's copies of the outputs and the answer parcel packed from them
        "helper-tmp": 2 * (MAX_OUTPUTS_BYTES + UTF8_EXPANSION * 2 * limits.output_bytes) + 64 * MIB,
    }
    return [{"name": name, "emptyDir": {"sizeLimit": _quantity(size)}} for name, size in sizes.items()]


def _helper_env(plan: JobPlan) -> list[dict[str, str]]:
    return [
        {"name": pod.ENV_PORT, "value": str(plan.port)},
        {"name": pod.ENV_TOKEN_SHA256, "value": plan.token_sha256},
        {"name": pod.ENV_CWD, "value": plan.cwd},
        {"name": pod.ENV_OUTPUT_FOLDERS, "value": json.dumps(list(plan.output_folders))},
        {"name": pod.ENV_WAIT_S, "value": str(_deadline_s(plan))},
        {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
    ]


def _helper(plan: JobPlan, role: str, port_name: str, mounts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": role,
        "image": plan.helper_image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["python", "-m", "services.runner.job_pod", role],
        "env": _helper_env(plan),
        "ports": [{"name": port_name, "containerPort": plan.port, "protocol": "TCP"}],
        "resources": HELPER_RESOURCES,
        "securityContext": _security(pod.HELPER_UID),
        "volumeMounts": [*mounts, {"name": "helper-tmp", "mountPath": "/tmp"}],
    }


def _workspace(plan: JobPlan) -> dict[str, Any]:
    memory = str(plan.limits.memory_bytes)
    mounts: list[dict[str, Any]] = [
        {"name": "request", "mountPath": pod.VIEW_ROOT, "subPath": pod.REQUEST_ROOT, "readOnly": True},
        *(
            {"name": "outputs", "mountPath": pod.view_path(folder), "subPath": pod.output_volume_folder(index)}
            for index, folder in enumerate(plan.output_folders)
        ),
        {"name": "plan", "mountPath": pod.PLAN_MOUNT, "readOnly": True},
        {"name": "results", "mountPath": pod.RESULTS_MOUNT},
        {"name": "scratch", "mountPath": pod.SCRATCH_MOUNT},
    ]
    return {
        "name": pod.WORKSPACE,
        "image": plan.image,
        "imagePullPolicy": "IfNotPresent",
        "command": [
            "python",
            "-I",
            "-S",
            f"{pod.PLAN_MOUNT}/{pod.LAUNCHER_FILE}",
            f"{pod.PLAN_MOUNT}/{pod.PLAN_FILE}",
        ],
        "workingDir": pod.view_path(plan.cwd),
        "resources": {
            "requests": {"cpu": plan.cpu, "memory": memory},
            "limits": {"cpu": plan.cpu, "memory": memory},
        },
        "securityContext": _security(pod.WORKSPACE_UID),
        "volumeMounts": mounts,
    }


def job_labels() -> dict[str, str]:
    return {
        "app.kubernetes.io/name": APP,
        "app.kubernetes.io/part-of": "modelguard",
        "app.kubernetes.io/managed-by": "modelguard",
    }


def job_manifest(plan: JobPlan) -> dict[str, Any]:
    receive_mounts = [
        {"name": "request", "mountPath": pod.REQUEST_MOUNT},
        {"name": "outputs", "mountPath": pod.OUTPUTS_MOUNT},
        {"name": "plan", "mountPath": pod.PLAN_MOUNT},
    ]
    collect_mounts = [
        {"name": "outputs", "mountPath": pod.OUTPUTS_MOUNT, "readOnly": True},
        {"name": "plan", "mountPath": pod.PLAN_MOUNT, "readOnly": True},
        {"name": "results", "mountPath": pod.RESULTS_MOUNT, "readOnly": True},
    ]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": plan.name, "namespace": plan.namespace, "labels": job_labels()},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": _deadline_s(plan),
            "ttlSecondsAfterFinished": TTL_AFTER_FINISHED_S,
            "template": {
                "metadata": {"labels": job_labels()},
                "spec": {
                    "restartPolicy": "Never",
                    "serviceAccountName": plan.service_account,
                    "automountServiceAccountToken": False,
                    "enableServiceLinks": False,
                    "terminationGracePeriodSeconds": GRACE_S,
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "initContainers": [_helper(plan, pod.RECEIVE, "receive", receive_mounts)],
                    "containers": [_workspace(plan), _helper(plan, pod.COLLECT, "answer", collect_mounts)],
                    "volumes": _volumes(plan),
                },
            },
        },
    }
