"""`modelguard bench sandbox-priority`: how much of a core a service keeps while workspace commands keep every core
busy. A loop in this process stands for the service; each busy command runs through the sandbox as the services
run theirs (``run_sandboxed``: its own session, ``limits.nice`` below ModelGuard). Beside it, for comparison, the
same commands started with the same niceness but left in a session group of their own at the default niceness:
what the niceness alone gives where the kernel groups processes by session (``sched(7)``, autogroup)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from libs.policy.sandbox import SandboxPolicy
from libs.sandbox.copy import copy_workspace
from libs.sandbox.limits import default_sandbox_policy
from libs.sandbox.run import SandboxResult, run_sandboxed

BUSY = "while True:\n    pass\n"
MEASURE_S = 2.0


def core_share(seconds: float) -> float:
    """This thread's CPU time over ``seconds`` of wall time, spinning: 1.0 when nothing else wants its core."""
    cpu, wall = time.thread_time(), time.monotonic()
    while time.monotonic() - wall < seconds:
        pass
    return (time.thread_time() - cpu) / seconds


def beside(start_busy: Callable[[], Callable[[], None]], commands: int) -> float:
    """The loop's share of a core while ``commands`` busy commands run; ``start_busy`` starts one and returns
    what stops it."""
    stops = [start_busy() for _ in range(commands)]
    try:
        time.sleep(0.5)  # every command running
        return core_share(MEASURE_S)
    finally:
        for stop in stops:
            stop()


def sandboxed_busy(workspace: Path, policy: SandboxPolicy, results: list[SandboxResult]) -> Callable[[], None]:
    """A busy command through the sandbox, in a thread; it ends at its wall limit (the stop waits for that) and its
    result joins ``results``."""
    thread = threading.Thread(
        target=lambda: results.append(run_sandboxed(["python", "run.py"], workspace, policy)), daemon=True
    )
    thread.start()
    return lambda: thread.join()


def busy_throughout(results: list[SandboxResult], commands: int, seconds: float) -> str | None:
    """Why the sandboxed commands do not count (one did not run, or used less CPU than the measured time), or
    None: a share measured beside commands that never ran would say nothing."""
    if len(results) != commands:
        return f"{commands - len(results)} of the {commands} sandboxed commands did not finish"
    for result in results:
        if result.report.limit_exceeded != "wall_time":
            return f"a sandboxed command ended before its wall limit: {result.failure_reason or 'it exited'}"
    used = sum(result.report.cpu_s or 0.0 for result in results)
    if used < seconds:
        return f"the sandboxed commands used {used:.2f} CPU-s in all, less than the {seconds:.0f} s measured"
    return None


def niced_only_busy(nice: int) -> Callable[[], None]:
    """The same busy code with the same niceness and a session of its own, its session group left as it is."""
    process = subprocess.Popen([sys.executable, "-c", BUSY], start_new_session=True, preexec_fn=lambda: os.nice(nice))

    def stop() -> None:
        process.kill()
        process.wait()

    return stop


def run_sandbox_priority_bench() -> int:
    policy = default_sandbox_policy()
    wall_s = MEASURE_S + 1.5
    limits = policy.limits.model_copy(update={"wall_s": wall_s, "cpu_s": max(policy.limits.cpu_s, wall_s + 1)})
    policy = policy.model_copy(update={"limits": limits})
    commands = 2 * len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="modelguard-bench-priority-") as folder:
        source = Path(folder) / "source"
        source.mkdir()
        (source / "run.py").write_text(BUSY, encoding="utf-8")
        workspace = copy_workspace(source, Path(folder) / "copy")
        alone = core_share(MEASURE_S)
        results: list[SandboxResult] = []
        sandboxed = beside(lambda: sandboxed_busy(workspace, policy, results), commands)
        niced_only = beside(lambda: niced_only_busy(limits.nice), commands)
    why_not = busy_throughout(results, commands, MEASURE_S)
    if why_not is not None:
        print(f"sandbox priority: not measured: {why_not}")
        return 1
    print(f"a service's share of one core while {commands} busy workspace commands run (nice {limits.nice}):")
    print(f"  alone:                                                 {alone:.2f}")
    print(f"  beside sandboxed commands (their session group niced): {sandboxed:.2f}")
    print(f"  beside commands niced only (their own session group):  {niced_only:.2f}")
    return 0
