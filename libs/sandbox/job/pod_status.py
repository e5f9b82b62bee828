"""How a workspace Job's pod stands, read from the pod objects the API lists: its address, each container's
state, and why it cannot go on (a pull that fails, a pod that cannot be scheduled, a pod the kubelet ended). Only
the kubelet and the scheduler write these fields; nothing in the pod's containers can."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PULL_FAILURES = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"})
START_FAILURES = frozenset({"CreateContainerConfigError", "CreateContainerError", "RunContainerError"})
MAX_TEXT = 500


@dataclass(frozen=True)
class ContainerState:
    state: str
    """``waiting``, ``running``, ``terminated``, or ``unknown`` (no status yet)."""
    reason: str = ""
    message: str = ""
    exit_code: int | None = None
    started_at: str = ""
    finished_at: str = ""

    def says(self) -> str:
        text = f"{self.reason}: {self.message}" if self.message else self.reason
        return " ".join(text.split())[:MAX_TEXT]


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def pod_ip(pod: dict[str, Any]) -> str | None:
    address = _mapping(pod.get("status")).get("podIP")
    return address if isinstance(address, str) and address else None


def phase(pod: dict[str, Any]) -> str:
    return str(_mapping(pod.get("status")).get("phase") or "Pending")


def pod_reason(pod: dict[str, Any]) -> str:
    status = _mapping(pod.get("status"))
    text = f"{status.get('reason') or ''}: {status.get('message') or ''}".strip(": ")
    return " ".join(text.split())[:MAX_TEXT]


def container_state(pod: dict[str, Any], name: str, *, init: bool = False) -> ContainerState:
    key = "initContainerStatuses" if init else "containerStatuses"
    statuses = _mapping(pod.get("status")).get(key)
    for status in statuses if isinstance(statuses, list) else []:
        if not isinstance(status, dict) or status.get("name") != name:
            continue
        state = _mapping(status.get("state"))
        for kind in ("terminated", "running", "waiting"):
            if kind in state:
                detail = _mapping(state[kind])
                code = detail.get("exitCode")
                return ContainerState(
                    state=kind,
                    reason=str(detail.get("reason") or ""),
                    message=str(detail.get("message") or ""),
                    exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
                    started_at=str(detail.get("startedAt") or ""),
                    finished_at=str(detail.get("finishedAt") or ""),
                )
    return ContainerState(state="unknown")


def unschedulable(pod: dict[str, Any]) -> str | None:
    """The scheduler's reason when it cannot place the pod (it keeps trying), else None."""
    conditions = _mapping(pod.get("status")).get("conditions")
    for condition in conditions if isinstance(conditions, list) else []:
        condition = _mapping(condition)
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            text = str(condition.get("message") or condition.get("reason") or "unschedulable")
            return " ".join(text.split())[:MAX_TEXT]
    return None
