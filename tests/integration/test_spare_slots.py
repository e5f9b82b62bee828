"""Command slots made ahead (libs/sandbox/spare_slots.py): a command runs as a shell that was held and moved into
its cgroups before the command was known; a spare has run nothing, holds nothing of ModelGuard's, is never used
once its shell is gone, and none outlives its process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from libs.policy.sandbox import MIB, SandboxLimits, SandboxPolicy
from libs.sandbox import spare_slots
from libs.sandbox.command_slot import CommandSlot, shape_of
from libs.sandbox.control_groups import PREFIX
from libs.sandbox.isolation import probe_isolation
from libs.sandbox.process import HOLD
from libs.sandbox.run import run_sandboxed
from libs.sandbox.spare_slots import close_spares, take_slot
from tests.support.waiting import wait_until

LIMITS = SandboxLimits(cpu_s=10, memory_bytes=512 * MIB, wall_s=30, max_processes=64)
POLICY = SandboxPolicy(limits=LIMITS)
SHAPE = shape_of(LIMITS)
pytestmark = pytest.mark.skipif(probe_isolation("auto").mechanism != "bwrap", reason="bubblewrap unavailable")
SHOWS_ITSELF = "import os; print(os.getpid(), os.getppid(), sorted(os.environ))"


@pytest.fixture(autouse=True)
def spares_kept_as_a_service_keeps_them(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    close_spares()
    monkeypatch.setattr(spare_slots, "SPARES", spare_slots.SERVICE_SPARES)
    yield
    close_spares()


def _spares() -> list[CommandSlot]:
    with spare_slots._lock:
        return list(spare_slots._spares.get(SHAPE, []))


def _ready(count: int) -> bool:
    return len(_spares()) >= count and not spare_slots._making.get(SHAPE, 0)


def test_a_command_runs_as_a_shell_held_ahead_with_its_own_environment_only(tmp_path: Path) -> None:
    run_sandboxed(["python", "-c", "pass"], tmp_path, POLICY)  # the first one makes the spares
    assert wait_until(lambda: _ready(spare_slots.SPARES), 30), _spares()
    spares = {slot.held.process.pid for slot in _spares()}
    for pid in spares:  # a spare is the held shell, waiting, with nothing of ModelGuard's in its environment
        assert Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:3] == [part.encode() for part in HOLD]
        assert Path(f"/proc/{pid}/environ").read_bytes() == b""

    result = run_sandboxed(["python", "-c", SHOWS_ITSELF], tmp_path, POLICY)

    assert result.returncode == 0, result.stderr
    assert len([pid for pid in spares if not _waiting(pid)]) == 1  # one spare's shell became the command, and is gone
    # and taking it started its successor: the pool is full again, with one shell that was not there before
    assert wait_until(lambda: _ready(spare_slots.SPARES), 30), _spares()
    now = {slot.held.process.pid for slot in _spares()}
    assert len(now) == spare_slots.SPARES and len(now - spares) == 1
    # the command's environment is the sandbox's (bubblewrap's --clearenv and --setenv), not the held shell's
    names = result.stdout.split("[", 1)[1]
    assert "'HOME'" in names and "'TMPDIR'" in names and "'PATH'" in names
    assert "MODELGUARD" not in names and "OLDPWD" not in names


def _waiting(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().startswith(HOLD[0].encode())
    except OSError:
        return False


def test_a_slot_taken_is_replaced_once_its_command_is_let_go_or_it_is_closed_not_while_it_is_prepared(
    tmp_path: Path,
) -> None:
    """Making a spare is this process's work: done while a command is being prepared, it slowed the preparation."""
    take_slot(SHAPE).close()  # closed without a command: replaced all the same
    assert wait_until(lambda: _ready(spare_slots.SPARES), 30), _spares()

    go_on = tmp_path / "go-on"
    os.mkfifo(go_on)
    taken = take_slot(SHAPE)  # being prepared: nothing is made yet
    waits = threading.Thread(target=taken.run, args=(["/bin/sh", "-c", f"read _ < {go_on}"], LIMITS, os.getuid()))
    try:
        assert len(_spares()) == spare_slots.SPARES - 1 and not spare_slots._making.get(SHAPE, 0)
        waits.start()  # let go: its successor is made while it runs, which is until it reads a line
        assert wait_until(lambda: _ready(spare_slots.SPARES), 30), _spares()
        assert waits.is_alive()
    finally:
        _let_it_read(go_on, waits)
        taken.close()


def _let_it_read(fifo: Path, reader: threading.Thread) -> None:
    """Write the line the command waits for, once it is there to read it (never, if it was not let go)."""
    while reader.is_alive():
        try:
            end = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO until the command has opened it
        except OSError:
            reader.join(0.05)
            continue
        try:
            os.write(end, b"done\n")
        finally:
            os.close(end)
        reader.join()


def test_a_spare_whose_shell_is_gone_is_not_used(tmp_path: Path) -> None:
    take_slot(SHAPE).close()
    assert wait_until(lambda: _ready(spare_slots.SPARES), 30)
    for slot in _spares():
        os.kill(slot.held.process.pid, signal.SIGKILL)
    assert wait_until(lambda: all(slot.held.process.poll() is not None for slot in _spares()), 10)

    result = run_sandboxed(["python", "-c", "print('ran')"], tmp_path, POLICY)

    assert (result.returncode, result.stdout) == (0, "ran\n"), result.stderr


def test_no_spare_outlives_the_process_that_made_it(tmp_path: Path) -> None:
    """At exit the spares are closed: no held shell of the process is left, nor any of its cgroups."""
    body = """
        spare_slots.keep_spares()
        run_sandboxed(["python", "-c", "pass"], CWD, SandboxPolicy())
        deadline = time.monotonic() + 30
        while sum(map(len, spare_slots._spares.values())) < spare_slots.SPARES and time.monotonic() < deadline:
            time.sleep(0.02)
        print(os.getpid(), sum(map(len, spare_slots._spares.values())))
        """
    done, folder, _ = _in_a_process(tmp_path, body)
    assert done.returncode == 0, done.stderr
    pid, made = (int(word) for word in done.stdout.split())
    assert made == spare_slots.SERVICE_SPARES  # there were spares to close
    assert wait_until(lambda: not list(folder.glob("modelguard-command-*")), 10), list(folder.iterdir())
    assert not [path for path in Path("/sys/fs/cgroup").glob(f"*/**/{PREFIX}{pid}-*") if path.is_dir()]


def test_a_forked_child_forgets_its_parents_spares(tmp_path: Path) -> None:
    take_slot(SHAPE).close()
    assert wait_until(lambda: _ready(1), 30)
    child = os.fork()
    if child == 0:  # the child's own view of the pool, and its exit, must leave the parent's spares alone
        os._exit(0 if not spare_slots._spares else 3)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert all(slot.usable() for slot in _spares())


def test_a_one_shot_process_makes_no_spares(tmp_path: Path) -> None:
    """A process that did not ask to keep spares (the CLI) runs its command in a slot made for it, and nothing else."""
    body = """
        result = run_sandboxed(["python", "-c", "print('ran')"], CWD, SandboxPolicy())
        time.sleep(0.5)  # a spare being made would be counted here, or be in the pool by now
        print(result.stdout.strip(), sum(map(len, spare_slots._spares.values())), sum(spare_slots._making.values()))
        """
    done, _, _ = _in_a_process(tmp_path, body)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ran", "0", "0"]


PROCESS_HEAD = """
import os, sys, time
from pathlib import Path
from libs.policy.sandbox import SandboxPolicy
from libs.sandbox import spare_slots
from libs.sandbox.run import run_sandboxed
"""


def _in_a_process(tmp_path: Path, body: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    """``body`` run by a fresh interpreter (after ``PROCESS_HEAD``; ``CWD`` names a folder to run commands in), its
    temporary folder one of its own: the run, that folder and ``CWD``."""
    folder, cwd = tmp_path / "temporary", tmp_path / "cwd"
    folder.mkdir()
    cwd.mkdir(mode=0o755)
    program = PROCESS_HEAD + f"CWD = Path({str(cwd)!r})\n" + textwrap.dedent(body)
    env = {**os.environ, "TMPDIR": str(folder)}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    return done, folder, cwd
