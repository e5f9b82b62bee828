"""The pipeline bench charges ModelGuard's services the CPU time their own processes spent, read from /proc: a busy
process's reading grows, a process that is gone reads as unmeasured, and the line says how busy that kept the
cores beside the commands."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from modelguard.pipeline_overhead import AtOnce, services_cpu_line
from modelguard.process_cpu import CpuSpent, cpu_readings, cpu_seconds

BUSY_THEN_IDLE = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\ntime.sleep(60)"


def test_a_child_is_charged_its_own_cpu_time_and_its_parent_is_not() -> None:
    parent_before = cpu_seconds(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", BUSY_THEN_IDLE])
    try:
        deadline = time.monotonic() + 60
        while (cpu_seconds(child.pid) or 0.0) < 0.4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (cpu_seconds(child.pid) or 0.0) >= 0.4
        parent_after = cpu_seconds(os.getpid())
        assert parent_before is not None and parent_after is not None
        assert parent_after - parent_before < 0.3  # polling only: the child's loop is not the parent's
    finally:
        child.kill()
        child.wait()
    assert cpu_seconds(child.pid) is None  # reaped: gone from /proc
    assert cpu_readings({"none": None}) == {"none": None}


def test_this_process_reading_grows_with_work() -> None:
    first = cpu_seconds(os.getpid())
    end = time.process_time() + 0.2
    while time.process_time() < end:
        pass
    second = cpu_seconds(os.getpid())
    assert first is not None and second is not None
    assert second - first >= 0.1


def test_a_process_without_both_readings_is_named_unmeasured() -> None:
    spent = CpuSpent.between({"detector": 1.0, "diagnoser": 2.0, "broker": None}, {"detector": 3.5, "diagnoser": None})
    assert spent.by_name == {"detector": 2.5, "diagnoser": None, "broker": None}
    assert spent.total_s == pytest.approx(2.5)
    assert spent.unmeasured == ["diagnoser", "broker"]


def test_the_line_adds_services_broker_and_commands_over_the_cores() -> None:
    spent = CpuSpent({"detector": 1.0, "diagnoser": 3.0, "broker": 2.0})
    together = AtOnce(incidents=4, wall_s=10.0, commands=8, measured=8, commands_cpu_s=10.0, cores=2)
    line = services_cpu_line(spent, 4, together)
    assert "services used 4.0 CPU-s (1.00 per incident: detector 1.0, diagnoser 3.0)" in line
    assert "the broker 2.0 CPU-s" in line
    assert "keeps 2 cores busy 8.0 s of the 10.0 s wall" in line
    assert "not measured" not in line
    unmeasured = services_cpu_line(CpuSpent({"detector": None, "broker": None}), 4, together)
    assert "not measured: detector, broker" in unmeasured and "the broker not measured" in unmeasured
