"""A sandboxed command tells whoever listens in its caller's context that it has begun, once, while its own process
runs: after it was let go, before it was reaped (libs/sandbox/command_start.py)."""

from __future__ import annotations

import threading
import time
from contextvars import copy_context
from pathlib import Path

import pytest

from libs.policy.sandbox import MIB, SandboxLimits, SandboxPolicy
from libs.sandbox.command_start import telling
from libs.sandbox.isolation import probe_isolation
from libs.sandbox.run import run_sandboxed

POLICY = SandboxPolicy(limits=SandboxLimits(cpu_s=10, memory_bytes=512 * MIB, wall_s=30, max_processes=64))
pytestmark = pytest.mark.skipif(probe_isolation("auto").mechanism != "bwrap", reason="bubblewrap unavailable")


def test_a_command_says_it_began_while_its_process_runs(tmp_path: Path) -> None:
    heard: list[float] = []
    with telling(lambda: heard.append(time.time())):
        result = run_sandboxed(["python", "-c", "import time; time.sleep(0.3)"], tmp_path, POLICY)
    assert result.returncode == 0, result.stderr
    assert result.ran is not None and len(heard) == 1
    let_go_at, reaped_at = result.ran
    assert let_go_at <= heard[0] <= reaped_at


def test_a_command_in_a_copy_of_the_context_tells_the_caller_and_nobody_else(tmp_path: Path) -> None:
    heard: list[str] = []
    elsewhere: list[str] = []
    with telling(lambda: heard.append("caller")):
        thread = threading.Thread(
            target=copy_context().run, args=(run_sandboxed, ["python", "-c", "pass"], tmp_path, POLICY)
        )
        thread.start()
    with telling(lambda: elsewhere.append("other")):  # set after the copy was made: not the command's listener
        thread.join(timeout=60)
    assert not thread.is_alive()
    assert heard == ["caller"] and elsewhere == []


def test_a_refused_command_says_nothing(tmp_path: Path) -> None:
    heard: list[float] = []
    with telling(lambda: heard.append(time.time())), pytest.raises(Exception, match="null"):
        run_sandboxed(["python", "-c", "pass\0"], tmp_path, POLICY)
    assert heard == []


def test_a_listener_that_fails_does_not_touch_the_command(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def failing() -> None:
        raise RuntimeError("the listener's own bug")

    with telling(failing):
        result = run_sandboxed(["python", "-c", "print('ran')"], tmp_path, POLICY)
    assert (result.returncode, result.stdout) == (0, "ran\n"), result.stderr
    assert "a listener for a command's start failed" in caplog.text
