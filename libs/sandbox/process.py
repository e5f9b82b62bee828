"""Start one allow-listed program without a shell under resource limits; read its output up to a cap; kill
its whole process group when it runs out of wall time, CPU time (all its processes together, where a cgroup
counts them) or output.

The kernel enforces, per process: CPU time (RLIMIT_CPU), address space (RLIMIT_AS), file size
(RLIMIT_FSIZE), no core dumps, and, for a uid other than root, the number of processes of that uid
(RLIMIT_NPROC). The command runs ``limits.nice`` below ModelGuard's own scheduling priority, and RLIMIT_NICE 0
keeps a non-root uid from raising it back: on a shared machine the services that watch a workspace are served
before the workspace's own code. Where the kernel groups processes by session (autogroup), the command's session
group gets the same niceness: otherwise each command, a session of its own, would weigh as much as a service. The
command starts held (``HOLD``) and is moved into its cgroups (``libs/sandbox/control_groups.py``) and given its
niceness and limits before it can start anything. This module enforces wall time, output size and total CPU time
itself.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import math
import os
import resource
import select
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from libs.policy.sandbox import SandboxLimits
from libs.sandbox.command_start import command_started

LimitName = Literal["wall_time", "cpu_time", "memory", "output", "file_size", "processes"]
ALLOWED_PROGRAMS: Mapping[str, str] = {"python": sys.executable}
READ_CHUNK = 64 * 1024
POLL_S = 0.05
WATCH_S = 0.1
UMASK = 0o022


class CommandNotAllowed(ValueError):
    """ModelGuard refuses to run the command: it does not start with an allow-listed program name, or (the
    subclasses) it cannot be confined here."""


def resolve_program(argv: Sequence[str], python: Path | None = None) -> list[str]:
    """``argv`` with its program replaced by the allow-listed binary; anything else is refused. ``python``: the
    workspace environment's interpreter that ``python`` stands for instead of ModelGuard's (checked by the caller:
    ``libs.sandbox.workspace_interpreter.checked``)."""
    if isinstance(argv, str) or not argv or argv[0] not in ALLOWED_PROGRAMS:
        program = argv[0] if argv and not isinstance(argv, str) else argv
        raise CommandNotAllowed(
            f"refused to run {program!r}: only {sorted(ALLOWED_PROGRAMS)} may run (as ModelGuard's interpreter "
            "or the workspace environment's)"
        )
    binary = str(python) if python is not None and argv[0] == "python" else ALLOWED_PROGRAMS[argv[0]]
    return [binary, *argv[1:]]


@dataclass(frozen=True)
class ProcessOutcome:
    returncode: int
    """As subprocess reports it: negative for a signal."""
    stdout: bytes
    stderr: bytes
    duration_s: float
    cpu_s: float
    """User plus system time of the process and every descendant it waited for."""
    max_rss_bytes: int
    killed_for: LimitName | None
    """Set when the sandbox itself killed the command (wall time or output)."""
    let_go_at: float | None = None
    """When the command was let go once confined (seconds since the epoch)."""
    reaped_at: float | None = None
    """When its process was reaped (seconds since the epoch). From ``let_go_at`` to here is the command's own time;
    before is ModelGuard's preparation (the view, the cgroup, confinement), after it its checks of the tree."""


def tasks_of_user(uid: int) -> int:
    """Threads the user runs now (RLIMIT_NPROC counts threads of the real user across the machine)."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = dict(
                line.split(":", 1) for line in Path(entry.path, "status").read_text().splitlines() if ":" in line
            )
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
    return count


def process_limit_binds(uid: int) -> bool:
    """The kernel does not apply RLIMIT_NPROC to root (nor to holders of CAP_SYS_RESOURCE or CAP_SYS_ADMIN)."""
    return uid != 0


def resource_limits(limits: SandboxLimits, process_cap: int | None = None) -> list[tuple[int, int]]:
    """(resource, value) pairs, each value also the hard limit so the command cannot raise it back; never
    above the hard limit ModelGuard itself runs under. ``process_cap``: RLIMIT_NPROC, when it applies."""
    cpu = max(1, math.ceil(limits.cpu_s))
    wanted = [
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes),
        (resource.RLIMIT_NICE, 0),
    ]
    if process_cap is not None:
        wanted.append((resource.RLIMIT_NPROC, process_cap))
    capped = []
    for name, value in wanted:
        _, hard = resource.getrlimit(name)
        capped.append((name, value if hard == resource.RLIM_INFINITY else min(value, hard)))
    return capped


AUTOGROUP = "/proc/self/autogroup"
"""This process's session group (``sched(7)``): where the kernel groups by session, it shares the CPU between
session groups first and by niceness only inside one, and a command is a session of its own."""


def session_group_nice(path: str = AUTOGROUP) -> int | None:
    """The niceness of this process's session group; None where the kernel does not group by session.

    The kernel prints nothing for a session that has no group of its own (one that never left init's, as on a CI
    runner started without ``setsid``): its processes are scheduled directly in the root group, which weighs as
    niceness 0, so 0 it is, and a command's own group is still set below it."""
    try:
        with open(path, encoding="ascii") as group:
            fields = group.read().split()
    except (OSError, ValueError):
        return None
    if not fields:
        return 0
    try:
        return int(fields[-1])
    except ValueError:
        return None


def command_group_nice(own_group: int | None, nice: int) -> bytes | None:
    """What a command writes to its session group's niceness: `nice` below ModelGuard's own group, at most 19;
    nothing where the kernel does not group by session."""
    return None if own_group is None else str(min(19, own_group + nice)).encode()


HOLD = ("/bin/sh", "-c", 'read -r _ || exit 125; . "$0"')
"""What a command starts as: a shell that waits for one line on its stdin, then runs its command file (``$0``),
whose one line ``exec``s the command (same pid, stdin /dev/null; ``command_line``). While it waits, a thread of
ModelGuard's moves it into the command's cgroups (``_join_cgroups``); when the command is let go, ModelGuard sets
its niceness and limits from outside (``_limit``), writes the command to the file and only then the line: it starts
nothing before it is confined. A move between cgroups waits for an RCU grace period (5-25 ms measured here), so the
shell is held before the command is known: while the sandbox prepares its view, or ahead of the command altogether
(``libs/sandbox/spare_slots.py``)."""


def command_line(command: Sequence[str]) -> bytes:
    """``exec`` of ``command`` for the POSIX shell, stdin /dev/null: each argument in single quotes, a quote within
    one written ``'\\''``, so the shell reads every argument back byte for byte and expands nothing."""
    words = []
    for argument in command:
        raw = os.fsencode(argument)
        if b"\0" in raw:
            raise ValueError("embedded null byte")  # what subprocess raises for such an argument
        words.append(b"'" + raw.replace(b"'", b"'\\''") + b"'")
    return b"exec " + b" ".join(words) + b" </dev/null\n"


@dataclass
class Held:
    """A held shell (``HOLD``) being moved into its cgroups by a thread of its own, and the file its command goes
    into."""

    process: subprocess.Popen[bytes]
    env: Mapping[str, str]
    command_file: Path
    confining: threading.Thread
    refusals: list[OSError] = field(default_factory=list)
    let_go: bool = False


def hold(*, cwd: Path, env: Mapping[str, str], cgroup_procs: Sequence[int]) -> Held:
    """Start a held shell in ``cwd`` with ``env`` and begin moving it into the cgroups whose ``cgroup.procs`` are
    open as ``cgroup_procs``; ``release`` it in every case. No Python
    code runs between fork and exec, so the standard library starts it with vfork: in a service holding a few
    hundred MB, a fork with a ``preexec_fn`` took 20 ms and 10 ms of the service's CPU per command, this 0.2 ms."""
    descriptor, name = tempfile.mkstemp(prefix="modelguard-command-")  # 0600, ModelGuard's own
    os.close(descriptor)
    try:
        process = subprocess.Popen(
            [*HOLD, name],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            shell=False,
            start_new_session=True,
            close_fds=True,
            umask=UMASK,
        )
    except BaseException:
        os.unlink(name)
        raise
    refusals: list[OSError] = []

    def confine() -> None:
        try:
            _join_cgroups(process.pid, cgroup_procs)
        except OSError as exc:
            refusals.append(exc)

    confining = threading.Thread(target=confine, name="modelguard-confine", daemon=True)
    confining.start()
    return Held(process, env, Path(name), confining, refusals)


def let_go(held: Held, command: Sequence[str], *, pairs: list[tuple[int, int]], nice: int) -> None:
    """Once the held shell is in its cgroups, give it its niceness and resource limits (``pairs``), write
    ``command`` to its file and let it go. A program that is not there or cannot be run raises OSError here, as the
    standard library's own start does, rather than becoming the shell's exit 127; a shell that could not be
    confined raises OSError, and in both cases nothing ran."""
    _startable(command[0], held.env)
    held.command_file.write_bytes(command_line(command))
    held.confining.join()
    try:
        if held.refusals:
            raise held.refusals[0]
        _limit(held.process.pid, pairs, nice)
    except OSError as exc:
        raise OSError(f"the command could not be started under its limits: {exc}") from exc
    stdin = held.process.stdin
    assert stdin is not None
    held.let_go = True
    with contextlib.suppress(BrokenPipeError):  # it died waiting (killed from outside): its status says so
        stdin.write(b"go\n")
    with contextlib.suppress(BrokenPipeError):
        stdin.close()


def release(held: Held) -> None:
    """A shell never let go is killed and reaped (it ran nothing); the command file goes in every case."""
    if not held.let_go:
        held.confining.join()
        if held.process.returncode is None:  # not reaped yet, so its group id is still its own to kill
            _kill_group(held.process)
        held.process.communicate()
    with contextlib.suppress(FileNotFoundError):
        held.command_file.unlink()


def _join_cgroups(pid: int, cgroup_procs: Sequence[int]) -> None:
    """Move the held process ``pid`` into the command's cgroups, before it can fork: it is waiting for its go.
    Raises OSError."""
    for descriptor in cgroup_procs:
        os.write(descriptor, str(pid).encode())


def _limit(pid: int, pairs: list[tuple[int, int]], nice: int) -> None:
    """Give the held process ``pid`` the command's niceness and resource limits. Raises OSError."""
    own = os.getpriority(os.PRIO_PROCESS, 0)
    os.setpriority(os.PRIO_PROCESS, pid, min(19, own + nice))  # RLIMIT_NICE 0 (below) keeps it from going back
    group_nice = command_group_nice(session_group_nice(), nice)
    if group_nice is not None:  # the new session's group too, or the niceness would count only inside it
        with contextlib.suppress(OSError):  # best effort: without CAP_SYS_ADMIN, one change per 0.1 s (EAGAIN)
            group = os.open(f"/proc/{pid}/autogroup", os.O_WRONLY)
            try:
                os.write(group, group_nice)
            finally:
                os.close(group)
    for name, value in pairs:
        hard = value + 1 if name == resource.RLIMIT_CPU else value  # SIGXCPU first, SIGKILL a second later
        resource.prlimit(pid, name, (value, hard))


def _startable(program: str, env: Mapping[str, str]) -> None:
    """Raise what ``subprocess`` would for a program it cannot start: FileNotFoundError, PermissionError."""
    found = program if os.sep in program else shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None or not os.path.isfile(found):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    if not os.access(found, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


CpuMeter = Callable[[], float | None]


def _over_cpu(cpu_used: CpuMeter | None, limits: SandboxLimits) -> bool:
    used = cpu_used() if cpu_used is not None else None
    return used is not None and used >= limits.cpu_s


def _pump(
    process: subprocess.Popen[bytes], limits: SandboxLimits, deadline: float, cpu_used: CpuMeter | None
) -> tuple[bytes, bytes, str | None]:
    """Read stdout and stderr until both close, the output cap is passed, the CPU time is used up or the
    deadline comes. The CPU time is read at most every WATCH_S, as when the command prints nothing: a command that
    prints line by line wakes this loop per line, and reading the meter (a cgroup file) each time cost the machine
    a file read per line."""
    kept: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
    total = 0
    reason: str | None = None
    cpu_read_next = 0.0
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, "stdout")  # type: ignore[arg-type]
        selector.register(process.stderr, selectors.EVENT_READ, "stderr")  # type: ignore[arg-type]
        while selector.get_map() and reason is None:
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                reason = "wall_time"
                break
            if now >= cpu_read_next:
                cpu_read_next = now + WATCH_S
                if _over_cpu(cpu_used, limits):
                    reason = "cpu_time"
                    break
            for key, _ in selector.select(timeout=min(remaining, WATCH_S)):
                data = os.read(key.fd, READ_CHUNK)
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                kept[key.data].append(data[: max(0, limits.output_bytes - total)])
                total += len(data)
                if total > limits.output_bytes:
                    reason = "output"
                    break
    return b"".join(kept["stdout"]), b"".join(kept["stderr"]), reason


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited, without reaping it (its zombie keeps the process group id reserved)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _wait_until(
    process: subprocess.Popen[bytes], deadline: float, limits: SandboxLimits, cpu_used: CpuMeter | None
) -> str | None:
    """None once the command has exited; ``wall_time`` or ``cpu_time`` when it ran out first. Its output closes
    an instant before it has exited, so this is usually one short wait: on the process's pidfd, which wakes it
    the moment the process exits (checking the limits every POLL_S meanwhile), or, where there is no pidfd, in
    sleeps from 1 ms doubling up to POLL_S."""
    with _exit_watch(process.pid) as wait:
        while not _exited(process.pid):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "wall_time"
            if _over_cpu(cpu_used, limits):
                return "cpu_time"
            wait(min(remaining, POLL_S))
    return None


@contextlib.contextmanager
def _exit_watch(pid: int) -> Iterator[Callable[[float], None]]:
    """A wait of at most the given seconds that ends early when ``pid`` exits (without reaping it)."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd on this system: back off instead
        delays = (min(POLL_S, 0.001 * 2**n) for n in itertools.count())

        def back_off(most: float) -> None:
            time.sleep(min(most, next(delays)))

        yield back_off
        return
    try:
        watch = select.poll()
        watch.register(pidfd, select.POLLIN)  # readable once the process has exited

        def until_exit(most: float) -> None:
            watch.poll(max(1, math.ceil(most * 1000)))

        yield until_exit
    finally:
        os.close(pidfd)


def run_limited(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    limits: SandboxLimits,
    process_cap: int | None = None,
    cgroup_procs: Sequence[int] = (),
    cpu_used: CpuMeter | None = None,
) -> ProcessOutcome:
    """Run ``command`` (already resolved and wrapped) in its own session: ``hold`` and ``run_held``.
    ``cgroup_procs``: open ``cgroup.procs`` files the child joins."""
    held = hold(cwd=cwd, env=env, cgroup_procs=cgroup_procs)
    try:
        return run_held(held, command, limits=limits, pairs=resource_limits(limits, process_cap), cpu_used=cpu_used)
    finally:
        release(held)


def run_held(
    held: Held,
    command: Sequence[str],
    *,
    limits: SandboxLimits,
    pairs: list[tuple[int, int]],
    cpu_used: CpuMeter | None,
    once_let_go: Callable[[], None] | None = None,
) -> ProcessOutcome:
    """Let ``command`` go as the held shell under ``limits`` (``pairs``: its resource limits); when it ends,
    exceeds its wall time, its CPU time (``cpu_used``: seconds of all its processes so far) or its output cap,
    everything left in its process group is killed. ``once_let_go``: called as soon as the command runs, before
    anything else is done."""
    let_go(held, command, pairs=pairs, nice=limits.nice)
    process = held.process
    let_go_at, started = time.time(), time.monotonic()
    if once_let_go is not None:
        once_let_go()
    command_started()
    deadline = started + limits.wall_s
    try:
        stdout, stderr, killed_for = _pump(process, limits, deadline, cpu_used)
        if killed_for is None:
            killed_for = _wait_until(process, deadline, limits, cpu_used)
    finally:
        _kill_group(process)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    _, status, usage = os.wait4(process.pid, 0)
    reaped_at = time.time()
    process.returncode = os.waitstatus_to_exitcode(status)
    return ProcessOutcome(
        returncode=process.returncode,
        stdout=stdout,
        stderr=stderr,
        duration_s=round(time.monotonic() - started, 3),
        cpu_s=round(usage.ru_utime + usage.ru_stime, 3),
        max_rss_bytes=usage.ru_maxrss * 1024,
        killed_for=killed_for,  # type: ignore[arg-type]
        let_go_at=let_go_at,
        reaped_at=reaped_at,
    )
