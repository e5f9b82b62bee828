"""The launcher: the only program of ModelGuard's that runs in the model's own image, as the workspace
container's first process (``python -I -S launch.py plan.json``). docs/sandbox.md, "In a per-model image".

It is copied into the pod as a file, not imported: it uses the standard library only (no ModelGuard, no site
packages; ``-I -S`` keeps the image's own ``sitecustomize`` and ``PYTHON*`` variables out of it) and runs on any
Python 3.8 or newer, because the model's image has nothing of ModelGuard in it. What it does, for one command:

- refuses any program but ``python``, which it runs as the interpreter it runs under itself (the image's);
- an environment built from nothing but the image's ``PATH``: ``HOME`` and ``TMPDIR`` in the scratch folder,
  the pinned locale, hash seed and thread counts (as ``libs/sandbox/environment.py`` does);
- per-process limits set between fork and exec (soft = hard, so the command cannot raise them): CPU seconds,
  address space, file size, no core dumps;
- stdout and stderr into two files of the results folder, at most ``output_bytes`` of both together; wall
  time; past either the command's process group is killed (and, as the container's PID 1, every process
  left in the container);
- ``status.json`` in the results folder: exit status, duration, CPU seconds and peak memory of what it waited
  for, and the limit it killed the command for. It exits with the command's exit status (128 + the signal).

The command runs as the same uid and can write the results folder too: what the launcher records is the
command's own account, like its stdout. The caller trusts the kubelet for how the container ended and computes
the gate metric itself from the predictions."""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import selectors
import signal
import subprocess
import sys
import time
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: nothing is imported at run time but the standard library
    from collections.abc import Callable

READ_CHUNK = 64 * 1024
WATCH_S = 0.1
UMASK = 0o022
PINNED = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
EXIT_REFUSED = 125
"""The launcher's own exit status when it refused the plan or could not start the command (no command ran)."""
LIMIT_KEYS = ("cpu_s", "memory_bytes", "wall_s", "output_bytes", "file_size_bytes")


class PlanRefused(ValueError):
    pass


def _number(limits: dict[str, Any], key: str) -> float:
    value = limits.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value != value:
        raise PlanRefused(f"limits.{key} must be a positive number")
    return value


def read_plan(path: str) -> dict[str, Any]:
    """The plan the receiver wrote: argv, cwd, results and scratch folders, limits."""
    with open(path, encoding="utf-8") as handle:
        plan = json.load(handle)
    if not isinstance(plan, dict):
        raise PlanRefused("the plan is not a JSON object")
    argv = plan.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(item, str) for item in argv):
        raise PlanRefused("argv must be a non-empty list of strings")
    if argv[0] != "python":
        raise PlanRefused(f"refused to run {argv[0][:100]!r}: only python may run")
    for key in ("cwd", "results", "scratch"):
        if not isinstance(plan.get(key), str) or not plan[key].startswith("/"):
            raise PlanRefused(f"{key} must be an absolute path")
    limits = plan.get("limits")
    if not isinstance(limits, dict):
        raise PlanRefused("limits must be an object")
    plan["limits"] = {key: _number(limits, key) for key in LIMIT_KEYS}
    return plan


def environment(scratch: str, path: str) -> dict[str, str]:
    home = os.path.join(scratch, "home")
    tmpdir = os.path.join(scratch, "tmp")
    for folder in (home, tmpdir):
        os.makedirs(folder, mode=0o700, exist_ok=True)
    values = {"PATH": path or DEFAULT_PATH, "HOME": home, "TMPDIR": tmpdir}
    values.update(PINNED)
    return values


def _preexec(limits: dict[str, float]) -> Callable[[], None]:
    cpu = max(1, math.ceil(limits["cpu_s"]))
    wanted = [
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_CPU, cpu, cpu + 1),  # SIGXCPU first, SIGKILL a second later
        (resource.RLIMIT_AS, int(limits["memory_bytes"]), int(limits["memory_bytes"])),
        (resource.RLIMIT_FSIZE, int(limits["file_size_bytes"]), int(limits["file_size_bytes"])),
    ]

    def apply() -> None:
        os.umask(UMASK)
        for name, soft, hard in wanted:
            _, ceiling = resource.getrlimit(name)
            if ceiling != resource.RLIM_INFINITY:
                soft, hard = min(soft, ceiling), min(hard, ceiling)
            resource.setrlimit(name, (soft, hard))

    return apply


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _pump(
    process: subprocess.Popen[bytes], streams: dict[str, IO[bytes]], limits: dict[str, float], deadline: float
) -> str | None:
    """Copy stdout and stderr into their files until both close, the output cap is passed or the deadline comes."""
    total = 0
    cap = int(limits["output_bytes"])
    assert process.stdout is not None and process.stderr is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, "stdout")
        selector.register(process.stderr, selectors.EVENT_READ, "stderr")
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "wall_time"
            for key, _ in selector.select(timeout=min(remaining, WATCH_S)):
                data = os.read(key.fd, READ_CHUNK)
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                streams[key.data].write(data[: max(0, cap - total)])
                total += len(data)
                if total > cap:
                    return "output"
    return None


def _wait(pid: int, deadline: float) -> tuple[int, resource.struct_rusage] | None:
    """(status, rusage) of ``pid``, or None when the deadline came first."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done == pid:
            return status, usage
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _reap_everything() -> None:
    """As the container's PID 1: end every process the command left (daemons included) and reap them."""
    if os.getpid() != 1:
        return
    with contextlib.suppress(OSError):
        os.kill(-1, signal.SIGKILL)  # in a PID namespace: every process in it but this one
    while True:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        if pid == 0:
            return


def run(plan: dict[str, Any]) -> dict[str, Any]:
    limits = plan["limits"]
    results = plan["results"]
    env = environment(plan["scratch"], os.environ.get("PATH", ""))
    argv = [sys.executable, *plan["argv"][1:]]
    started = time.monotonic()
    deadline = started + float(limits["wall_s"])
    with open(os.path.join(results, "stdout"), "wb") as out, open(os.path.join(results, "stderr"), "wb") as err:
        process = subprocess.Popen(
            argv,
            cwd=plan["cwd"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            shell=False,
            start_new_session=True,
            close_fds=True,
            preexec_fn=_preexec(limits),
        )
        signal.signal(signal.SIGTERM, lambda *_: _kill_group(process.pid))  # the pod is being stopped
        try:
            killed_for = _pump(process, {"stdout": out, "stderr": err}, limits, deadline)
            waited = _wait(process.pid, deadline) if killed_for is None else None
            if killed_for is None and waited is None:
                killed_for = "wall_time"
        finally:
            _kill_group(process.pid)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
    if waited is None:
        _, status, usage = os.wait4(process.pid, 0)
    else:
        status, usage = waited
    process.returncode = exit_code(status)
    return {
        "returncode": process.returncode,
        "duration_s": round(time.monotonic() - started, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "max_rss_bytes": usage.ru_maxrss * 1024,
        "killed_for": killed_for,
    }


def _write_status(results: str, status: dict[str, Any]) -> None:
    path = os.path.join(results, "status.json")
    with open(path + ".part", "w", encoding="utf-8") as handle:
        json.dump(status, handle, sort_keys=True)
    os.replace(path + ".part", path)


def main(arguments: list[str]) -> int:
    if len(arguments) != 2:
        sys.stderr.write("usage: python -I -S launch.py plan.json\n")
        return EXIT_REFUSED
    try:
        plan = read_plan(arguments[1])
    except (OSError, ValueError) as error:
        sys.stderr.write(f"modelguard launcher: refused the plan: {error}\n")
        return EXIT_REFUSED
    try:
        status = run(plan)
    except OSError as error:
        sys.stderr.write(f"modelguard launcher: the command could not start: {error}\n")
        _write_status(plan["results"], {"refused": f"the command could not start: {error}"})
        return EXIT_REFUSED
    _write_status(plan["results"], status)
    _reap_everything()
    code = int(status["returncode"])
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
