"""One workspace command as a Kubernetes Job in the model's own image, with the same result as
``run_sandboxed``: the caller's side of docs/sandbox.md, "In a per-model image".

As with the workspace runner (``libs/sandbox/remote/client.py``), the caller keeps its own checks: the program
allow-list and a working directory inside a secret are refused before anything is made; its protected paths decide
what is sent (a secret the command line names is never sent and fails the run); its working directory is hashed
before and after; the answer is checked whole before any of it is used (``libs/sandbox/remote/answer.py``). Then:

1. the Job (``manifest.py``) is created with a fresh bearer token's sha256 in it; a Pod Security warning from the
   API (the namespace would refuse its pods) ends the run at once;
2. once the API lists its pod with an address and the ``receive`` role running, the request parcel goes there;
3. the caller waits for the kubelet to say the model's container ended: a pull that fails, or an image that
   cannot start the launcher, is ``EnvironmentUnavailable`` (the incident ends ``environment_failed``); running
   past the wall time and the margin is ``RunnerTimedOut``;
4. the answer parcel comes from the ``collect`` role, the report is written from the Job and the kubelet
   (``report.py``), and the Job is deleted (its pods with it) whatever happened.

A pod that cannot be scheduled or started within ``start_timeout_s`` is ``RunnerUnavailable``."""

from __future__ import annotations

import logging
import os
import secrets
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from libs.policy.sandbox import SandboxPolicy
from libs.sandbox.command_start import command_started
from libs.sandbox.confinement import SYSTEM_FOLDERS
from libs.sandbox.integrity import compare_trees, hash_tree
from libs.sandbox.job import pod
from libs.sandbox.job.image_policy import image_declaration
from libs.sandbox.job.kube_api import CreatedJob, JobApi, KubeApiError
from libs.sandbox.job.manifest import JobPlan, job_manifest
from libs.sandbox.job.pod_exchange import PodExchange
from libs.sandbox.job.pod_status import (
    PULL_FAILURES,
    START_FAILURES,
    ContainerState,
    container_state,
    phase,
    pod_ip,
    pod_reason,
    unschedulable,
)
from libs.sandbox.job.report import MECHANISM, job_report
from libs.sandbox.job.settings import ImageJobSettings
from libs.sandbox.process import CommandNotAllowed, resolve_program
from libs.sandbox.protected_paths import protected_paths
from libs.sandbox.remote.answer import accept_answer
from libs.sandbox.remote.protocol import RunnerTimedOut, RunnerUnavailable, answer_limit
from libs.sandbox.remote.request import write_request
from libs.sandbox.remote.shipment import Shipment, plan_shipment
from libs.sandbox.run import SandboxResult
from libs.workspace_env.failure import EnvironmentUnavailable

log = logging.getLogger("modelguard.sandbox.job")
MAX_MOUNT_PATH = 1024
NOT_STARTING = frozenset({"StartError", "ContainerCannotRun"})


def system_folders() -> list[Path]:
    """Folders whose paths mean the same in the model's image (its own ``/usr``): never sent, never moved."""
    return [Path(name) for name in SYSTEM_FOLDERS if Path(name).is_dir() and not Path(name).is_symlink()]


def _check_mountable(shipment: Shipment) -> None:
    """The working directory and the output folders become a pod's working directory and mount points."""
    for path in (shipment.cwd, *shipment.output_folders):
        text = str(path)
        if ":" in text or len(text) > MAX_MOUNT_PATH or "\n" in text:
            raise CommandNotAllowed(
                f"refused to run in a workspace Job: {text[:200]} cannot be a pod's mount path (no ':', at most "
                f"{MAX_MOUNT_PATH} characters)"
            )


@dataclass
class _Watch:
    api: JobApi
    namespace: str
    job: CreatedJob
    poll_s: float
    last: dict[str, Any] | None = None

    def pod(self) -> dict[str, Any] | None:
        pods = self.api.job_pods(self.namespace, self.job.uid)
        self.last = pods[0] if pods else None
        return self.last

    def until(self, ready: Callable[[dict[str, Any]], bool], deadline: float, waiting_for: str) -> dict[str, Any]:
        """The pod once ``ready`` says so (``ready`` raises for a pod that cannot get there)."""
        while True:
            found = self.pod()
            if found is not None and ready(found):
                return found
            if time.monotonic() >= deadline:
                raise RunnerUnavailable(
                    f"refused to run workspace code: the workspace Job {self.job.name} did not get {waiting_for} in "
                    f"time: {_where(found)}"
                )
            time.sleep(self.poll_s)


def _where(found: dict[str, Any] | None) -> str:
    if found is None:
        return "no pod yet (see the Job's events: kubectl describe job)"
    return unschedulable(found) or pod_reason(found) or f"pod {phase(found)}"


def _failed(found: dict[str, Any], before: str) -> None:
    if phase(found) == "Failed":
        raise RunnerUnavailable(
            f"refused to run workspace code: the workspace Job's pod failed {before}: {pod_reason(found) or 'Failed'}"
        )


def _receiver_ready(found: dict[str, Any]) -> bool:
    _failed(found, "before it took the command")
    receiver = container_state(found, pod.RECEIVE, init=True)
    if receiver.state == "waiting" and receiver.reason in PULL_FAILURES:
        raise RunnerUnavailable(f"refused to run workspace code: ModelGuard's helper image: {receiver.says()}")
    if receiver.state == "terminated":
        raise RunnerUnavailable(
            f"refused to run workspace code: the workspace Job's receive role ended early: {receiver.says()}"
        )
    return receiver.state == "running" and pod_ip(found) is not None


def _workspace(image: str) -> Callable[[dict[str, Any]], ContainerState]:
    def state(found: dict[str, Any]) -> ContainerState:
        container = container_state(found, pod.WORKSPACE)
        if container.state == "waiting" and container.reason in PULL_FAILURES:
            raise EnvironmentUnavailable(
                f"the model's image {image} could not be pulled: {container.says()}",
                declaration=image_declaration(image),
            )
        if (container.state == "waiting" and container.reason in START_FAILURES) or (
            container.state == "terminated" and container.reason in NOT_STARTING
        ):
            raise EnvironmentUnavailable(
                f"the model's image {image} could not start the launcher (it needs python on its PATH): "
                f"{container.says()}",
                declaration=image_declaration(image),
            )
        if container.state != "terminated":
            _failed(found, "while the command ran")
        return container

    return state


def _run_pod(
    watch: _Watch, plan: JobPlan, settings: ImageJobSettings, parcel: Path, token: str, answer: Path, limit: int
) -> tuple[ContainerState, str]:
    started = time.monotonic()
    found = watch.until(_receiver_ready, started + settings.start_timeout_s, "its receive role running")
    address = pod_ip(found)
    assert address is not None
    exchange = PodExchange(address, settings.port, token)
    try:
        exchange.send_request(parcel, started + settings.start_timeout_s)
        workspace = _workspace(plan.image)
        pulled = time.monotonic() + settings.start_timeout_s
        found = watch.until(lambda p: workspace(p).state in ("running", "terminated"), pulled, "the model's image")
        ends = time.monotonic() + plan.limits.wall_s + settings.answer_margin_s
        while (container := workspace(found)).state != "terminated":
            if time.monotonic() >= ends:
                raise RunnerTimedOut(
                    f"the workspace Job {plan.name} did not finish within {plan.limits.wall_s:g} s and the "
                    f"{settings.answer_margin_s:g} s margin"
                )
            time.sleep(settings.poll_s)
            found = watch.pod() or found
        exchange.fetch_answer(answer, limit, time.monotonic() + settings.answer_margin_s)
    finally:
        exchange.close()
    return container, str(found.get("metadata", {}).get("name", ""))


def _warned(job: CreatedJob) -> str | None:
    return next((warning for warning in job.warnings if "PodSecurity" in warning), None)


def run_in_job(
    argv: Sequence[str], cwd: Path, policy: SandboxPolicy, image: str, settings: ImageJobSettings, api: JobApi
) -> SandboxResult:
    """Run ``argv`` in ``cwd`` as a Job in ``image`` (allowed by the central policy: the caller checked)."""
    resolve_program(argv)
    cwd = Path(os.path.realpath(cwd))
    protected = protected_paths(policy.hidden)
    secret = protected.secret_holding(cwd)
    if secret is not None:
        raise CommandNotAllowed(f"refused to run in {cwd}: it lies inside the protected {secret}")
    shipment = plan_shipment(list(argv), cwd, protected, system_folders())
    _check_mountable(shipment)
    before = hash_tree(cwd)
    with tempfile.TemporaryDirectory(prefix="modelguard-job-") as folder:
        work = Path(folder)
        request = write_request(shipment, policy, protected, work)
        token = secrets.token_urlsafe(32)
        plan = JobPlan(
            name=f"modelguard-ws-{secrets.token_hex(6)}",
            namespace=settings.namespace,
            image=image,
            helper_image=settings.helper_image,
            service_account=settings.service_account,
            token_sha256=pod.token_sha256(token),
            cwd=str(shipment.cwd),
            output_folders=tuple(str(path) for path in shipment.output_folders),
            limits=policy.limits,
            request_bytes=request.parcel.stat().st_size,
            port=settings.port,
            cpu=settings.cpu,
            start_timeout_s=settings.start_timeout_s,
            answer_margin_s=settings.answer_margin_s,
        )
        command_started()  # what is left of it is the Job's work, and the wait for it
        try:
            created = api.create_job(plan.namespace, job_manifest(plan))
        except KubeApiError as error:
            raise RunnerUnavailable(f"refused to run workspace code: {error}") from None
        log.info("workspace Job %s/%s created for %s in %s", plan.namespace, plan.name, argv[0], image)
        try:
            warning = _warned(created)
            if warning is not None:
                raise RunnerUnavailable(f"refused to run workspace code: the namespace refuses its pods: {warning}")
            watch = _Watch(api, plan.namespace, created, settings.poll_s)
            answer = work / "answer.tar"
            container, pod_name = _run_pod(
                watch, plan, settings, request.parcel, token, answer, answer_limit(policy.limits)
            )
            accepted = accept_answer(answer, shipment, policy, work / "answer", mechanisms=(MECHANISM,))
        except KubeApiError as error:
            raise RunnerUnavailable(f"refused to run workspace code: {error}") from None
        finally:
            try:
                api.delete_job(plan.namespace, plan.name)
            except KubeApiError as error:
                log.warning("the workspace Job %s was not deleted (its TTL removes it): %s", plan.name, error)
    changes = compare_trees(before, hash_tree(cwd))
    returncode, report = job_report(accepted, container, plan, pod_name, shipment, request, changes)
    return SandboxResult(
        argv=list(argv),
        returncode=returncode,
        stdout=accepted.stdout,
        stderr=accepted.stderr,
        duration_s=accepted.duration_s,
        report=report,
    )
