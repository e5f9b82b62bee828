"""The embedded stack's supervisor over a real broker: a service killed with SIGKILL is started again (its
restart and exit code shown by `modelguard stack status`), and `stack down` leaves nothing running, the
supervisor included, without it starting anything again on the way down."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from modelguard.cli import main
from modelguard.stack import ServiceStatus, pid_alive, read_state, stack_status
from tests.support.running_stack import running_stack

pytestmark = [pytest.mark.broker]


def wait_status(home_settings, name: str, condition, timeout_s: float = 120.0) -> ServiceStatus:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    status = stack_status(home_settings)[name]
    while not condition(status) and time.monotonic() < deadline:
        time.sleep(0.2)
        status = stack_status(home_settings)[name]
    assert condition(status), status
    return status


def test_a_killed_service_is_started_again_and_stack_down_stops_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_stack(tmp_path / "home", services=("ledger", "detector")) as stack:
        before = stack_status(stack.settings)
        assert before["supervisor"].running and before["ledger"].running and before["ledger"].restarts == 0
        victim = before["ledger"].pid
        assert victim is not None
        os.killpg(victim, signal.SIGKILL)
        after = wait_status(stack.settings, "ledger", lambda s: s.running and s.pid != victim)
        assert (after.restarts, after.last_exit) == (1, -signal.SIGKILL)
        ready = stack.settings.run_dir / "ledger.ready"
        deadline = time.monotonic() + 120
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert ready.exists(), "the restarted ledger never said it is ready"
        assert stack_status(stack.settings)["detector"].restarts == 0
        assert main(["stack", "status"]) == 0
        printed = capsys.readouterr().out
        assert "ledger     running" in printed and "restarts 1, last exit -9" in printed
        state = read_state(stack.settings.home)
        assert state is not None
        everything = [state.supervisor_pid, *state.services.values()]
    assert not any(pid_alive(pid) for pid in everything)
    assert read_state(stack.settings.home) is None
