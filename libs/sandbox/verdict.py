"""Why a sandboxed command failed, in words: which limit it ran into, how it ended."""

from __future__ import annotations

import math
import signal

from libs.policy.sandbox import SandboxLimits
from libs.sandbox.control_groups import CgroupUsage
from libs.sandbox.process import LimitName, ProcessOutcome

MEMORY_MARKERS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc")
FILE_SIZE_MARKERS = ("File too large", "[Errno 27]")
PROCESS_MARKERS = ("[Errno 11] Resource temporarily unavailable", "can't start new thread")
SIGNAL_EXIT_BASE = 128
TAIL_BYTES = 4096


def signal_of(returncode: int, wrapped: bool) -> int | None:
    """The signal that ended the command: negative returncodes come from subprocess; a wrapper (bubblewrap)
    reports a signal inside the sandbox as 128 + its number."""
    if returncode < 0:
        return -returncode
    if wrapped and SIGNAL_EXIT_BASE < returncode < SIGNAL_EXIT_BASE + 65:
        return returncode - SIGNAL_EXIT_BASE
    return None


def exceeded_limit(
    outcome: ProcessOutcome,
    limits: SandboxLimits,
    *,
    wrapped: bool,
    usage: CgroupUsage | None = None,
    process_limit_in_force: bool = False,
) -> LimitName | None:
    """The limit that ended the command, or that it ran into, if any. Wall time, total CPU time and output
    are known (the sandbox killed it); a cgroup's memory OOM kill and refused forks are counted by the
    kernel (a fork storm that then exits 0 still ran into its limit); otherwise CPU time from the signal or
    the CPU used, memory and file size from the kernel's refusal as the failing process reported it (the
    only trace RLIMIT_AS and RLIMIT_FSIZE leave). ``process_limit_in_force``: a refused fork means the
    process limit (a pids cgroup or RLIMIT_NPROC of a non-root uid)."""
    if outcome.killed_for is not None:
        return outcome.killed_for
    if usage is not None and usage.oom_kills > 0:
        return "memory"
    if usage is not None and usage.forks_refused > 0:
        return "processes"
    if outcome.returncode == 0:
        return None
    ended_by = signal_of(outcome.returncode, wrapped)
    if ended_by == signal.SIGXFSZ:
        return "file_size"
    cpu_limit = math.ceil(limits.cpu_s)
    if ended_by == signal.SIGXCPU or outcome.cpu_s >= cpu_limit:
        return "cpu_time"
    if ended_by == signal.SIGKILL and outcome.duration_s >= cpu_limit:
        return "cpu_time"  # the hard limit, one second after SIGXCPU, for a command that ignored SIGXCPU
    tail = outcome.stderr[-TAIL_BYTES:].decode("utf-8", "replace")
    if any(marker in tail for marker in MEMORY_MARKERS):
        return "memory"
    if any(marker in tail for marker in FILE_SIZE_MARKERS):
        return "file_size"
    if process_limit_in_force and any(marker in tail for marker in PROCESS_MARKERS):
        return "processes"
    return None


def limit_text(limit: LimitName, limits: SandboxLimits) -> str:
    figures = {
        "wall_time": f"wall-time limit of {limits.wall_s:g} s",
        "cpu_time": f"CPU-time limit of {math.ceil(limits.cpu_s)} s",
        "memory": f"memory limit of {limits.memory_bytes} bytes",
        "output": f"output limit of {limits.output_bytes} bytes",
        "file_size": f"file-size limit of {limits.file_size_bytes} bytes",
        "processes": f"process limit of {limits.max_processes} processes",
    }
    return f"exceeded the {figures[limit]}"


def ending_text(returncode: int, wrapped: bool) -> str:
    number = signal_of(returncode, wrapped)
    if number is None:
        return f"exit {returncode}"
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return f"killed by {name}"
