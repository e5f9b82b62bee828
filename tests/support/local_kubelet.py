"""A kubelet for one machine and no container runtime, for the tests of the workspace Job: it runs the pods the
fake API's Job controller makes (tests/support/fake_kube_api.py) as local processes and writes their status back
the way the kubelet does. Each container runs in bubblewrap with the file system its spec asks for:

- its image's files, read-only: an image is a list of host folders shown at their paths (``LocalImage``); the
  model's image is the system's ``/usr`` and ``/etc`` with Debian's python3 as ``python`` and nothing of
  ModelGuard's; ModelGuard's image adds this source tree and its virtual environment;
- every volume mount of the spec at its ``mountPath`` (``subPath``, ``readOnly``), each emptyDir a fresh folder;
- a read-only root file system, its own PID namespace with the command as PID 1, the spec's ``workingDir``,
  ``command`` and ``env`` (and the image's ``PATH``, nothing of the test process), and, when the tests run as root,
  the spec's ``runAsUser``/``runAsGroup`` (setpriv).

Init containers run to completion first; an image this kubelet does not have is ``ErrImagePull``; a container that
exits is ``terminated`` with its exit code; the pod's ``activeDeadlineSeconds`` ends it (``DeadlineExceeded``).

What it does not do: pull images, enforce resource limits (memory, CPU) or NetworkPolicy (the pod shares the test
machine's loopback, where its address is 127.0.0.1), seccomp, or anything a real node's runtime adds."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.fake_kube_api import FakeKubeApi

SYSTEM_LINKS = {"/bin": "usr/bin", "/sbin": "usr/sbin", "/lib": "usr/lib", "/lib64": "usr/lib64"}


@dataclass(frozen=True)
class LocalImage:
    folders: tuple[str, ...]
    """Host folders shown read-only at their own paths."""
    path: str
    """The image's PATH."""
    workdir: str = "/"
    placed: tuple[tuple[str, str], ...] = ()
    """(host folder, where the image has it): shown read-only there."""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parents(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]


@dataclass
class _RunningPod:
    name: str
    spec: dict[str, Any]
    root: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    stopped: threading.Event = field(default_factory=threading.Event)
    logs: dict[str, Path] = field(default_factory=dict)


class LocalKubelet:
    def __init__(self, api: FakeKubeApi, images: dict[str, LocalImage], work: Path) -> None:
        self.api = api
        self.images = images
        self.work = work
        self.pods: dict[str, _RunningPod] = {}
        self.threads: list[threading.Thread] = []
        api.on_pod = self.start
        api.on_delete = self.stop

    # the fake API's hooks
    def start(self, made: dict[str, Any]) -> None:
        name = made["metadata"]["name"]
        running = _RunningPod(name, made["spec"], self.work / name)
        self.pods[name] = running
        thread = threading.Thread(target=self._run, args=(running,), daemon=True, name=f"kubelet-{name}")
        self.threads.append(thread)
        thread.start()

    def stop(self, name: str) -> None:
        running = self.pods.get(name)
        if running is None:
            return
        running.stopped.set()
        for process in running.processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

    def close(self) -> None:
        for name in list(self.pods):
            self.stop(name)
        for thread in self.threads:
            thread.join(timeout=30)

    def log_of(self, pod_name: str, container: str) -> str:
        path = self.pods[pod_name].logs.get(container)
        return path.read_text(errors="replace") if path is not None and path.exists() else ""

    # the pod
    def _status(self, running: _RunningPod, **fields: Any) -> None:
        if not running.stopped.is_set() and running.name in self.api.pods:
            self.api.set_status(running.name, fields)

    def _volumes(self, running: _RunningPod) -> dict[str, Path]:
        folders = {}
        for volume in running.spec.get("volumes", []):
            folder = running.root / "volumes" / volume["name"]
            folder.mkdir(parents=True)
            folder.chmod(0o777)  # as the kubelet makes an emptyDir
            folders[volume["name"]] = folder
        return folders

    def _argv(self, container: dict[str, Any], image: LocalImage, volumes: dict[str, Path]) -> list[str]:
        argv = ["bwrap", "--die-with-parent", "--unshare-pid", "--as-pid-1", "--unshare-ipc", "--unshare-uts"]
        if os.getuid() != 0:
            argv.append("--unshare-user")
        bound: list[str] = []
        made: set[str] = set()

        def bind(option: str, source: str, target: str) -> None:
            for parent in _parents(target):  # folders on the way, traversable by any uid (bwrap makes them 0700)
                if parent not in made and not any(Path(parent).is_relative_to(done) for done in bound):
                    argv.extend(["--perms", "0755", "--dir", parent])
                    made.add(parent)
            argv.extend([option, source, target])
            bound.append(target)

        binds = [("--ro-bind", folder, folder) for folder in image.folders]
        binds += [("--ro-bind", source, target) for source, target in image.placed]
        for mount in container.get("volumeMounts", []):
            source = volumes[mount["name"]] / mount.get("subPath", "")
            source.mkdir(parents=True, exist_ok=True)
            binds.append(("--ro-bind" if mount.get("readOnly") else "--bind", str(source), mount["mountPath"]))
        # outermost first (a stable sort: at one depth the image's, then the volumes'): an image laid out at its host
        # paths may sit under a path the pod mounts (a checkout in /tmp, where the helpers mount an emptyDir), and
        # a real image would keep those files elsewhere, visible
        for option, source, target in sorted(binds, key=lambda b: len(Path(b[2]).parts)):
            bind(option, source, target)
        for link, target in SYSTEM_LINKS.items():
            if Path(link).is_symlink():
                argv += ["--symlink", target, link]
        argv += ["--dev", "/dev", "--proc", "/proc"]
        argv += ["--remount-ro", "/", "--chdir", container.get("workingDir", image.workdir), "--"]
        security = container.get("securityContext", {})
        if os.getuid() == 0 and "runAsUser" in security:
            uid, gid = security["runAsUser"], security.get("runAsGroup", security["runAsUser"])
            argv += ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
        return [*argv, *container["command"], *container.get("args", [])]

    def _container_status(self, container: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": container["name"],
            "image": container["image"],
            "imageID": "",
            "ready": "running" in state,
            "restartCount": 0,
            "state": state,
        }

    def _start_container(
        self, running: _RunningPod, container: dict[str, Any], volumes: dict[str, Path]
    ) -> subprocess.Popen[bytes] | dict[str, Any]:
        """The process, or the waiting state of a container that cannot start (its image is not here)."""
        image = self.images.get(container["image"])
        if image is None:
            message = f'Failed to pull image "{container["image"]}": not found'
            return {"waiting": {"reason": "ErrImagePull", "message": message}}
        env = {"PATH": image.path, "HOSTNAME": running.name}
        env |= {item["name"]: item["value"] for item in container.get("env", [])}
        log = running.root / f"{container['name']}.log"
        running.logs[container["name"]] = log
        with log.open("wb") as out:
            process = subprocess.Popen(
                self._argv(container, image, volumes),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        running.processes.append(process)
        return process

    def _wait(self, process: subprocess.Popen[bytes], deadline: float) -> int | None:
        while True:
            try:
                return process.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    return None

    def _terminated(self, code: int, started: str) -> dict[str, Any]:
        reason = "Completed" if code == 0 else "Error"
        exit_code = 128 - code if code < 0 else code
        return {"terminated": {"exitCode": exit_code, "reason": reason, "startedAt": started, "finishedAt": _now()}}

    def _run(self, running: _RunningPod) -> None:
        spec = running.spec
        deadline = time.monotonic() + spec.get("activeDeadlineSeconds", 3600)
        volumes = self._volumes(running)
        inits: list[dict[str, Any]] = []
        for container in spec.get("initContainers", []):
            started = _now()
            process = self._start_container(running, container, volumes)
            if isinstance(process, dict):
                self._status(running, initContainerStatuses=[self._container_status(container, process)])
                return
            state = {"running": {"startedAt": started}}
            self._status(running, podIP="127.0.0.1", initContainerStatuses=[self._container_status(container, state)])
            code = self._wait(process, deadline)
            if code is None or running.stopped.is_set():
                self._end(running, "DeadlineExceeded")
                return
            inits.append(self._container_status(container, self._terminated(code, started)))
            self._status(running, initContainerStatuses=inits)
            if code != 0:
                self._status(running, phase="Failed")
                return
        self._run_containers(running, spec, volumes, deadline)

    def _run_containers(
        self, running: _RunningPod, spec: dict[str, Any], volumes: dict[str, Path], deadline: float
    ) -> None:
        started = _now()
        states: dict[str, dict[str, Any]] = {}
        processes: dict[str, subprocess.Popen[bytes]] = {}
        for container in spec["containers"]:
            outcome = self._start_container(running, container, volumes)
            if isinstance(outcome, dict):
                states[container["name"]] = outcome
            else:
                processes[container["name"]] = outcome
                states[container["name"]] = {"running": {"startedAt": started}}
        by_name = {c["name"]: c for c in spec["containers"]}

        def publish(phase: str) -> None:
            statuses = [self._container_status(by_name[name], state) for name, state in states.items()]
            self._status(running, phase=phase, containerStatuses=statuses)

        publish("Running")
        while processes:
            if running.stopped.is_set():
                return
            if time.monotonic() >= deadline:
                self._end(running, "DeadlineExceeded")
                return
            for name, process in list(processes.items()):
                code = process.poll()
                if code is not None:
                    states[name] = self._terminated(code, started)
                    processes.pop(name)
                    publish("Running")
            time.sleep(0.05)
        failed = any("terminated" not in s or s["terminated"]["exitCode"] != 0 for s in states.values())
        publish("Failed" if failed else "Succeeded")

    def _end(self, running: _RunningPod, reason: str) -> None:
        self.stop(running.name)
        running.stopped.clear()
        self._status(running, phase="Failed", reason=reason, message="Pod was active on the node longer than allowed")
        running.stopped.set()


def model_image(work: Path) -> LocalImage:
    """The model's image: the system (no ModelGuard, no pydantic) with Debian's python3 as ``python``."""
    bin_folder = work / "model-image-bin"
    bin_folder.mkdir(parents=True, exist_ok=True)
    (bin_folder / "python").symlink_to("/usr/bin/python3")
    placed = ((str(bin_folder), "/opt/python/bin"),)
    return LocalImage(folders=("/usr", "/etc"), placed=placed, path="/opt/python/bin:/usr/bin:/bin")


def modelguard_image(repo_root: Path) -> LocalImage:
    """ModelGuard's image: the system, this source tree and the interpreter running the tests."""
    folders = dict.fromkeys(
        ["/usr", "/etc", str(repo_root), sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent)]
    )
    return LocalImage(
        folders=tuple(folders), path=f"{Path(sys.executable).parent}:/usr/bin:/bin", workdir=str(repo_root)
    )
