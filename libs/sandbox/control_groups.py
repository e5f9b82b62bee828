"""A control group for one command, so its limits bind whoever it runs as (root included) and count every
process it starts together: ``pids`` (processes and threads), ``memory`` (RAM, and swap where the kernel
accounts it) and CPU accounting (to stop the command at its CPU time, all processes together).

Each controller is taken where this machine has it: a cgroup v1 hierarchy that holds it, else the unified
(v2) hierarchy when the controller is enabled for ModelGuard's own cgroup. The command's cgroup is always
created *under ModelGuard's own* cgroup of that hierarchy (so whatever limits ModelGuard itself runs under
still apply), removed when the command ends, and every process in it is killed first. Where no hierarchy
is writable (no cgroup file system, not root, no delegation), the limits fall back to per-process resource
limits and the report says so.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from libs.process_liveness import process_ended

Controller = Literal["pids", "memory", "cpu"]
CONTROLLERS: tuple[Controller, ...] = ("pids", "memory", "cpu")
V1_NAMES: Mapping[Controller, tuple[str, ...]] = {"pids": ("pids",), "memory": ("memory",), "cpu": ("cpuacct",)}
V2_FILES: Mapping[Controller, str] = {"pids": "pids.max", "memory": "memory.max", "cpu": "cpu.stat"}
PREFIX = "modelguard-sandbox-"
EMPTY_TIMEOUT_S = 10.0
POLL_S = 0.02


@dataclass(frozen=True)
class Hierarchy:
    version: Literal[1, 2]
    mount: Path
    own: str
    """ModelGuard's own cgroup in it, relative to the mount."""

    def own_folder(self) -> Path:
        return self.mount / self.own.lstrip("/")


@dataclass(frozen=True)
class CgroupUsage:
    cpu_s: float | None = None
    memory_peak_bytes: int | None = None
    processes_peak: int | None = None
    oom_kills: int = 0
    forks_refused: int = 0


def _mounts(mountinfo: str) -> tuple[dict[str, tuple[Path, str]], tuple[Path, str] | None]:
    """v1 controller -> (mount point, mount root), and the v2 mount, from /proc/self/mountinfo."""
    v1: dict[str, tuple[Path, str]] = {}
    v2: tuple[Path, str] | None = None
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point, fstype, options = fields[3], Path(fields[4]), tail[0], tail[2].split(",")
        if fstype == "cgroup2" and v2 is None:
            v2 = (point, root)
        elif fstype == "cgroup":
            for name in options:
                v1.setdefault(name, (point, root))
    return v1, v2


def _memberships(proc_cgroup: str) -> tuple[dict[str, str], str | None]:
    """v1 controller -> path, and the v2 path, from /proc/self/cgroup."""
    v1: dict[str, str] = {}
    v2: str | None = None
    for line in proc_cgroup.splitlines():
        number, _, rest = line.partition(":")
        names, _, path = rest.partition(":")
        if number == "0" and names == "":
            v2 = path
        else:
            for name in names.split(","):
                v1[name] = path
    return v1, v2


def _relative(path: str, root: str) -> str:
    """A cgroup path as seen from a mount whose root is ``root`` (a container sees its own subtree)."""
    if root not in ("", "/") and (path == root or path.startswith(root.rstrip("/") + "/")):
        return path[len(root) :] or "/"
    return path


def _v2_enabled(folder: Path) -> set[str]:
    try:
        return set((folder / "cgroup.controllers").read_text().split())
    except OSError:
        return set()


def find_hierarchies(
    mountinfo: str | None = None, proc_cgroup: str | None = None
) -> tuple[dict[Controller, Hierarchy], dict[Controller, str]]:
    """Where each controller can be used by this process, and why not for the others."""
    mountinfo = Path("/proc/self/mountinfo").read_text() if mountinfo is None else mountinfo
    proc_cgroup = Path("/proc/self/cgroup").read_text() if proc_cgroup is None else proc_cgroup
    v1_mounts, v2_mount = _mounts(mountinfo)
    v1_paths, v2_path = _memberships(proc_cgroup)
    found: dict[Controller, Hierarchy] = {}
    missing: dict[Controller, str] = {}
    for controller in CONTROLLERS:
        name = next((n for n in V1_NAMES[controller] if n in v1_mounts and n in v1_paths), None)
        if name is not None:
            point, root = v1_mounts[name]
            found[controller] = Hierarchy(1, point, _relative(v1_paths[name], root))
            continue
        if v2_mount is not None and v2_path is not None:
            hierarchy = Hierarchy(2, v2_mount[0], _relative(v2_path, v2_mount[1]))
            if controller == "cpu" or controller in _v2_enabled(hierarchy.own_folder()):
                found[controller] = hierarchy
                continue
        missing[controller] = f"no cgroup hierarchy with the {controller} controller"
    return found, missing


def _write(path: Path, value: str) -> None:
    with path.open("w") as handle:
        handle.write(value)


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _read_keyed(path: Path) -> dict[str, int]:
    values: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                values[key] = int(value)
    return values


def remove_stale(parent: Path) -> None:
    """Empty command cgroups left by a ModelGuard process that no longer runs (killed before it cleaned up)."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if not entry.name.startswith(PREFIX):
                continue
            creator = entry.name[len(PREFIX) :].split("-", 1)[0]
            if creator.isdigit() and process_ended(int(creator)):
                with contextlib.suppress(OSError):
                    entry.rmdir()


@dataclass
class CommandCgroup:
    """The cgroup folders of one command (one per hierarchy) and what each controller enforces."""

    folders: dict[Controller, Path]
    hierarchies: dict[Controller, Hierarchy]
    missing: dict[Controller, str] = field(default_factory=dict)
    _opened: list[int] = field(default_factory=list)

    def enforces(self, controller: Controller) -> bool:
        return controller in self.folders

    def describe(self, controller: Controller) -> str:
        """``cgroup v1 pids`` and the like, or why the controller is not in use."""
        if controller in self.folders:
            return f"cgroup v{self.hierarchies[controller].version} {controller}"
        return self.missing.get(controller, "not used")

    def unique_folders(self) -> list[Path]:
        return list(dict.fromkeys(self.folders.values()))

    def join_descriptors(self) -> list[int]:
        """Open ``cgroup.procs`` of every folder; the held command's pid is written to each before it starts."""
        self._opened = [
            os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC) for folder in self.unique_folders()
        ]
        return list(self._opened)

    def close_descriptors(self) -> None:
        for descriptor in self._opened:
            with contextlib.suppress(OSError):
                os.close(descriptor)
        self._opened = []

    def _file(self, controller: Controller, v1: str, v2: str) -> Path | None:
        if controller not in self.folders:
            return None
        return self.folders[controller] / (v1 if self.hierarchies[controller].version == 1 else v2)

    def cpu_s(self) -> float | None:
        """CPU seconds used by every process of the command so far."""
        path = self._file("cpu", "cpuacct.usage", "cpu.stat")
        if path is None:
            return None
        if self.hierarchies["cpu"].version == 1:
            nanoseconds = _read_int(path)
            return None if nanoseconds is None else nanoseconds / 1e9
        microseconds = _read_keyed(path).get("usage_usec")
        return None if microseconds is None else microseconds / 1e6

    def usage(self) -> CgroupUsage:
        memory_events = self._file("memory", "memory.oom_control", "memory.events")
        pids_events = self._file("pids", "pids.events", "pids.events")
        peak_memory = self._file("memory", "memory.max_usage_in_bytes", "memory.peak")
        peak_pids = self._file("pids", "pids.peak", "pids.peak")
        return CgroupUsage(
            cpu_s=self.cpu_s(),
            memory_peak_bytes=_read_int(peak_memory) if peak_memory else None,
            processes_peak=_read_int(peak_pids) if peak_pids else None,
            oom_kills=_read_keyed(memory_events).get("oom_kill", 0) if memory_events else 0,
            forks_refused=_read_keyed(pids_events).get("max", 0) if pids_events else 0,
        )

    def _members(self) -> set[int]:
        members: set[int] = set()
        for folder in self.unique_folders():
            with contextlib.suppress(OSError):
                members |= {int(pid) for pid in (folder / "cgroup.procs").read_text().split()}
        return members

    def kill_all(self) -> None:
        """SIGKILL every process of the command, until none is left (or EMPTY_TIMEOUT_S has passed)."""
        for folder in self.unique_folders():
            with contextlib.suppress(OSError):
                if (folder / "cgroup.kill").exists():
                    _write(folder / "cgroup.kill", "1")
        deadline = time.monotonic() + EMPTY_TIMEOUT_S
        delays = (min(POLL_S, 0.001 * 2**n) for n in itertools.count())  # killed processes leave within a few ms
        while (members := self._members()) and time.monotonic() < deadline:
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(next(delays))

    def remove(self) -> None:
        self.close_descriptors()
        self.kill_all()
        for folder in self.unique_folders():
            deadline = time.monotonic() + EMPTY_TIMEOUT_S
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(POLL_S)


def _configure(controller: Controller, folder: Path, version: int, limits: Mapping[Controller, int]) -> None:
    if controller == "pids":
        _write(folder / "pids.max", str(limits["pids"]))
    elif controller == "memory" and version == 1:
        _write(folder / "memory.limit_in_bytes", str(limits["memory"]))
        if (folder / "memory.memsw.limit_in_bytes").exists():
            _write(folder / "memory.memsw.limit_in_bytes", str(limits["memory"]))
    elif controller == "memory":
        _write(folder / "memory.max", str(limits["memory"]))
        if (folder / "memory.swap.max").exists():
            _write(folder / "memory.swap.max", "0")


def create_command_cgroup(
    max_processes: int,
    memory_bytes: int,
    *,
    locate: Callable[[], tuple[dict[Controller, Hierarchy], dict[Controller, str]]] = find_hierarchies,
) -> CommandCgroup:
    """A fresh cgroup per hierarchy under ModelGuard's own, with ``pids.max`` and the memory limit written.
    A controller that cannot be set up is left out, with the reason, never half set up."""
    try:
        hierarchies, missing = locate()
    except OSError as exc:
        return CommandCgroup({}, {}, {c: f"cgroups unreadable: {exc.strerror or exc}" for c in CONTROLLERS})
    name = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
    folders: dict[Controller, Path] = {}
    created: dict[Path, bool] = {}
    limits: dict[Controller, int] = {"pids": max_processes, "memory": memory_bytes}
    for controller, hierarchy in hierarchies.items():
        folder = hierarchy.own_folder() / name
        try:
            if folder not in created:
                remove_stale(hierarchy.own_folder())
                folder.mkdir()
                created[folder] = True
            if hierarchy.version == 2 and not (folder / V2_FILES[controller]).exists():
                missing[controller] = f"the {controller} controller is not enabled for ModelGuard's cgroup v2"
                continue
            _configure(controller, folder, hierarchy.version, limits)
            folders[controller] = folder
        except OSError as exc:
            missing[controller] = f"cannot create a cgroup in {hierarchy.own_folder()}: {exc.strerror or exc}"
    for folder in created:
        if folder not in folders.values():
            with contextlib.suppress(OSError):
                folder.rmdir()
    return CommandCgroup(folders, {c: hierarchies[c] for c in folders}, missing)
