"""The ``SandboxReport`` of a command that ran as a workspace Job, written by the caller: what enforced each limit
is what the caller put in the Job it created (nothing the pod says about itself), how the container ended is the
kubelet's (its exit code and reason; ``OOMKilled`` is the memory limit), and the launcher's account (which limit it
killed the command for, CPU seconds, peak memory), which came with the answer, is kept only where the kubelet agrees
with it. A launcher that left no readable status fails the run."""

from __future__ import annotations

import dataclasses
import math

from libs.sandbox.integrity import TreeChanges
from libs.sandbox.job import pod
from libs.sandbox.job.manifest import JobPlan
from libs.sandbox.job.pod_status import ContainerState
from libs.sandbox.remote.answer import Accepted
from libs.sandbox.remote.request import RequestParcel
from libs.sandbox.remote.shipment import Shipment
from libs.sandbox.report import SandboxReport

MECHANISM = "kubernetes-job"
NO_STATUS = "the launcher left no readable status"
SIGNAL_EXIT_BASE = 128


def container_exit(returncode: int) -> int:
    """The exit code a container reports for a process that ended with ``returncode`` (negative: a signal)."""
    return SIGNAL_EXIT_BASE - returncode if returncode < 0 else returncode


def _dedupe(*groups: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for group in groups for item in group))


def _union(a: TreeChanges, b: TreeChanges) -> TreeChanges:
    return TreeChanges(
        created=tuple(sorted({*a.created, *b.created})),
        modified=tuple(sorted({*a.modified, *b.modified})),
        deleted=tuple(sorted({*a.deleted, *b.deleted})),
    )


def with_isolation(report: SandboxReport, plan: JobPlan, pod_name: str) -> SandboxReport:
    """``report`` with what enforced what, as the caller made the Job (nothing the pod said about itself)."""
    limits = plan.limits
    return dataclasses.replace(
        report,
        mechanism=MECHANISM,
        identity=(
            f"uid {pod.WORKSPACE_UID} in the model's image {plan.image}, pod {pod_name or '?'} of Job {plan.name} "
            f"in namespace {plan.namespace}"
        ),
        network_isolation=(
            f"by NetworkPolicy: namespace {plan.namespace} denies the pod every egress (enforced where the cluster's "
            "network plugin enforces NetworkPolicy; not checked from here)"
        ),
        filesystem_isolation=(
            "a pod of its own: the model's image with a read-only root file system, the revision and the named "
            "inputs read-only, the output folders and /tmp writable; no Secret, no service-account token"
        ),
        process_limit=(
            "not enforced per command (the node's pod PID limit, the kubelet's podPidsLimit, where the cluster sets "
            "one)"
        ),
        memory_limit=(
            f"enforced (the container's memory limit: {limits.memory_bytes} bytes together, the kernel's OOM killer; "
            f"RLIMIT_AS {limits.memory_bytes} bytes per process)"
        ),
        cpu_limit=(
            f"per process only (RLIMIT_CPU {math.ceil(limits.cpu_s)} s per process); the container's CPU limit of "
            f"{plan.cpu} cores caps the rate"
        ),
    )


def job_outcome(accepted: Accepted, container: ContainerState) -> tuple[int, SandboxReport]:
    """The returncode and the launcher's part of the report, checked against how the kubelet says it ended."""
    report = accepted.report
    exit_code = container.exit_code if container.exit_code is not None else 1
    oom = container.reason == "OOMKilled"
    said = f"the container ended with exit {exit_code}" + (f" ({container.reason})" if container.reason else "")
    if report.ending.startswith(NO_STATUS):
        returncode = exit_code or 1
        report = dataclasses.replace(
            report, ending=f"{said}; {NO_STATUS}", limit_exceeded="memory" if oom else None, cpu_s=None
        )
    elif container_exit(accepted.returncode) != exit_code:
        returncode = exit_code or 1
        ending = f"{said}, not as the launcher's status says (exit {accepted.returncode})"
        report = dataclasses.replace(report, ending=ending, limit_exceeded="memory" if oom else None, cpu_s=None)
    else:
        returncode = accepted.returncode
        if oom:
            report = dataclasses.replace(report, limit_exceeded="memory", ending=f"{report.ending} ({said})")
    return returncode, report


def job_report(
    accepted: Accepted,
    container: ContainerState,
    plan: JobPlan,
    pod_name: str,
    shipment: Shipment,
    request: RequestParcel,
    changes: TreeChanges,
) -> tuple[int, SandboxReport]:
    returncode, report = job_outcome(accepted, container)
    report = dataclasses.replace(
        with_isolation(report, plan, pod_name),
        hidden=(),
        inputs=tuple(str(given.path) for given in request.inputs),
        workspace_changes=_union(report.workspace_changes, changes),
        refused_inputs=_dedupe(shipment.refused_inputs, request.refused_inputs),
        refused_outputs=shipment.refused_outputs,
        outputs_written=accepted.written,
        outputs_not_copied=_dedupe(report.outputs_not_copied, accepted.not_copied),
        runner=f"kubernetes job {plan.namespace}/{plan.name} ({plan.image})",
    )
    return returncode, report
