"""The allow-list of programs and the resource limits handed to the kernel."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from libs.policy.sandbox import SandboxLimits
from libs.sandbox.process import (
    WATCH_S,
    CommandNotAllowed,
    command_group_nice,
    hold,
    release,
    resolve_program,
    resource_limits,
    run_limited,
    session_group_nice,
)


@pytest.mark.parametrize(
    "argv",
    [[], ["bash", "-c", "id"], ["sh", "-c", "python -V"], [sys.executable, "-V"], ["python3", "-V"], ["python -V"]],
)
def test_only_the_allow_listed_interpreter_runs(argv: list[str]) -> None:
    with pytest.raises(CommandNotAllowed, match="only \\['python'\\] may run"):
        resolve_program(argv)


def test_python_is_modelguards_own_interpreter() -> None:
    assert resolve_program(["python", "-m", "pytest"]) == [sys.executable, "-m", "pytest"]


def test_limits_become_kernel_resource_limits() -> None:
    limits = SandboxLimits(cpu_s=2.5, memory_bytes=512 * 1024**2, file_size_bytes=1024**2)
    pairs = dict(resource_limits(limits))
    assert pairs[resource.RLIMIT_CORE] == 0
    assert pairs[resource.RLIMIT_CPU] == 3
    assert pairs[resource.RLIMIT_AS] == 512 * 1024**2
    assert pairs[resource.RLIMIT_FSIZE] == 1024**2
    assert pairs[resource.RLIMIT_NICE] == 0, "a non-root command cannot raise its priority back"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("/autogroup-26904 nice 0\n", 0),
        ("/autogroup-7 nice -5\n", -5),
        ("/autogroup-7 nice 19\n", 19),
        # the kernel prints nothing for a session with no group of its own: scheduled in the root group, niceness 0
        ("", 0),
        ("\n", 0),
        ("/autogroup-7 nice\n", None),
    ],
)
def test_a_session_groups_niceness_is_read_or_none(tmp_path: Path, content: str, expected: int | None) -> None:
    group = tmp_path / "autogroup"
    group.write_text(content, encoding="ascii")
    assert session_group_nice(str(group)) == expected


def test_no_session_group_file_means_no_niceness(tmp_path: Path) -> None:
    assert session_group_nice(str(tmp_path / "absent")) is None


@pytest.mark.parametrize(
    ("own_group", "nice", "written"),
    [(0, 10, b"10"), (0, 3, b"3"), (5, 10, b"15"), (15, 10, b"19"), (-5, 10, b"5"), (None, 10, None)],
)
def test_a_commands_group_goes_below_modelguards_own(own_group: int | None, nice: int, written: bytes | None) -> None:
    """From the root group (an empty autogroup file reads as 0) too: the command's own group is set below it."""
    assert command_group_nice(own_group, nice) == written


def test_a_session_in_the_root_group_still_sets_its_commands_group_below(tmp_path: Path) -> None:
    group = tmp_path / "autogroup"
    group.write_text("", encoding="ascii")
    assert command_group_nice(session_group_nice(str(group)), 10) == b"10"


def _no_pidfd(_pid: int) -> int:
    raise OSError(38, "Function not implemented")


@pytest.fixture(params=[True, False], ids=["pidfd", "no-pidfd"])
def exit_watch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exit is awaited on the process's pidfd, or (where there is none) in sleeps."""
    if not request.param:
        monkeypatch.setattr(os, "pidfd_open", _no_pidfd)


CLOSES_ITS_OUTPUT = "import os, time; os.close(1); os.close(2); time.sleep({sleep}); raise SystemExit({code})"


@pytest.mark.usefixtures("exit_watch")
def test_a_command_that_closes_its_output_is_waited_for_until_it_exits(tmp_path: Path) -> None:
    command = [sys.executable, "-c", CLOSES_ITS_OUTPUT.format(sleep=0.3, code=3)]

    outcome = run_limited(command, cwd=tmp_path, env=dict(os.environ), limits=SandboxLimits(wall_s=60))

    assert (outcome.returncode, outcome.killed_for, outcome.stdout) == (3, None, b"")
    assert outcome.duration_s >= 0.3
    assert outcome.let_go_at is not None and outcome.reaped_at is not None
    assert outcome.reaped_at - outcome.let_go_at >= 0.3  # the command's own time: let go, then waited for until reaped


@pytest.mark.usefixtures("exit_watch")
def test_a_command_still_running_after_its_output_closed_is_stopped_at_its_wall_time(tmp_path: Path) -> None:
    command = [sys.executable, "-c", CLOSES_ITS_OUTPUT.format(sleep=120, code=0)]

    outcome = run_limited(command, cwd=tmp_path, env=dict(os.environ), limits=SandboxLimits(wall_s=1))

    assert outcome.killed_for == "wall_time"
    assert outcome.returncode == -9


CHATTY = """import time
start = time.monotonic()
while time.monotonic() - start < {seconds}:
    print("step", flush=True)
"""


def test_a_command_that_prints_line_by_line_has_its_cpu_read_at_the_watch_pace(tmp_path: Path) -> None:
    """Each printed line wakes the output loop; the CPU meter (a cgroup file) is read at most every WATCH_S all the
    same, not once per line."""
    reads: list[float] = []

    def meter() -> float:
        reads.append(time.monotonic())
        return 0.0

    command = [sys.executable, "-c", CHATTY.format(seconds=1.0)]
    outcome = run_limited(command, cwd=tmp_path, env=dict(os.environ), limits=SandboxLimits(wall_s=60), cpu_used=meter)

    assert outcome.returncode == 0 and outcome.stdout.count(b"\n") > 1000  # it woke the loop far more often
    assert len(reads) <= outcome.duration_s / WATCH_S + 3


def test_a_chatty_command_past_its_cpu_time_is_still_stopped(tmp_path: Path) -> None:
    used = iter([0.0, 0.0, 99.0])

    command = [sys.executable, "-c", CHATTY.format(seconds=60)]
    outcome = run_limited(
        command,
        cwd=tmp_path,
        env=dict(os.environ),
        limits=SandboxLimits(wall_s=60, cpu_s=5),
        cpu_used=lambda: next(used, 99.0),
    )

    assert outcome.killed_for == "cpu_time" and outcome.duration_s < 5


SHOWS_ITS_START = (
    "import os, resource, sys; "
    "print(repr(sys.stdin.read()), os.readlink('/proc/self/fd/0'), os.getsid(0) == os.getpid(), "
    "os.getpriority(os.PRIO_PROCESS, 0), resource.getrlimit(resource.RLIMIT_CPU), sys.argv[1:])"
)


def test_a_command_starts_as_itself_with_its_limits_and_no_python_between_fork_and_exec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[dict[str, object]] = []
    popen = subprocess.Popen

    def recorded(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        started.append(kwargs)
        return popen(*args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(subprocess, "Popen", recorded)
    limits = SandboxLimits(wall_s=60, cpu_s=7, nice=5)
    own = os.getpriority(os.PRIO_PROCESS, 0)
    command = [sys.executable, "-c", SHOWS_ITS_START, "a b", "$HOME", "'q'"]

    outcome = run_limited(command, cwd=tmp_path, env=dict(os.environ), limits=limits)

    assert outcome.returncode == 0, outcome.stderr
    expected = f"'' /dev/null True {min(19, own + 5)} (7, 8) ['a b', '$HOME', \"'q'\"]"
    assert outcome.stdout.decode().strip() == expected  # its own stdin, session, niceness, limits and arguments
    assert started and "preexec_fn" not in started[0]  # so the standard library starts it with vfork


def _started(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """The processes ``subprocess.Popen`` starts from here on."""
    started: list[subprocess.Popen[bytes]] = []
    popen = subprocess.Popen

    def recorded(*args: object, **kwargs: object) -> subprocess.Popen[bytes]:
        process = popen(*args, **kwargs)  # type: ignore[call-overload]
        started.append(process)
        return process  # type: ignore[no-any-return]

    monkeypatch.setattr(subprocess, "Popen", recorded)
    return started


def test_a_command_that_cannot_be_confined_does_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    started = _started(monkeypatch)
    read_only = os.open(os.devnull, os.O_RDONLY)  # a cgroup.procs that refuses the write
    try:
        with pytest.raises(OSError, match="could not be started under its limits"):
            run_limited(
                [sys.executable, "-c", f"open({str(marker)!r}, 'w')"],
                cwd=tmp_path,
                env=dict(os.environ),
                limits=SandboxLimits(wall_s=60),
                cgroup_procs=[read_only],
            )
    finally:
        os.close(read_only)
    [held] = started
    assert held.returncode is not None  # killed and reaped before the error came out: nothing of it runs later
    assert not marker.exists()


ARGUMENTS = ["a b", "$HOME", "'q'", "it's", "two\nlines", "`id`", "; exit 3", "\\", '"', "*", "-", ""]


def test_every_argument_reaches_the_command_as_it_was_given(tmp_path: Path) -> None:
    odd = os.fsdecode(b"not-utf8-\xff")  # a file name that is not UTF-8, as Python holds it
    command = [sys.executable, "-c", "import os, sys; print(repr([os.fsencode(a) for a in sys.argv[1:]]))"]

    outcome = run_limited([*command, *ARGUMENTS, odd], cwd=tmp_path, env=dict(os.environ), limits=SandboxLimits())

    assert outcome.returncode == 0, outcome.stderr
    assert outcome.stdout.decode().strip() == repr([os.fsencode(a) for a in [*ARGUMENTS, odd]])


def test_a_command_with_a_null_byte_is_refused_and_nothing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _started(monkeypatch)
    with pytest.raises(ValueError, match="null byte"):
        run_limited([sys.executable, "-c", "pass", "a\0b"], cwd=tmp_path, env=dict(os.environ), limits=SandboxLimits())
    assert [p.returncode for p in started] == [-signal.SIGKILL]  # the held shell, killed before it ran anything


def test_the_command_file_is_removed_whatever_happens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = tmp_path / "tmp"
    files.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(files))
    run_limited([sys.executable, "-c", "pass"], cwd=tmp_path, env=dict(os.environ), limits=SandboxLimits())
    with pytest.raises(FileNotFoundError):
        run_limited([str(tmp_path / "absent")], cwd=tmp_path, env=dict(os.environ), limits=SandboxLimits())
    assert list(files.iterdir()) == []


def test_a_program_that_is_not_there_or_not_executable_raises_as_before(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("not a program")
    with pytest.raises(FileNotFoundError):
        run_limited([str(tmp_path / "absent")], cwd=tmp_path, env=dict(os.environ), limits=SandboxLimits(wall_s=60))
    with pytest.raises(PermissionError):
        run_limited([str(plain)], cwd=tmp_path, env=dict(os.environ), limits=SandboxLimits(wall_s=60))


def test_a_held_shell_already_reaped_is_not_killed_by_its_old_group_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spare found dead was reaped when it was looked at: its process group id may belong to someone else now."""
    held = hold(cwd=tmp_path, env={}, cgroup_procs=[])
    held.process.kill()
    held.process.wait()
    killed: list[int] = []
    monkeypatch.setattr(os, "killpg", lambda group, signal: killed.append(group))
    release(held)
    assert killed == []
    assert not held.command_file.exists()
