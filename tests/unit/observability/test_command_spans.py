"""A span per workspace command, in the incident's trace: a child of the handler's span when there is one, else of
the incident's root span (a thread that did not inherit the context). Run in a service-like process of its own,
whose tracer provider writes the trace file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from libs.observability.command_span import CPU_ATTRIBUTE, RAN_FROM_ATTRIBUTE, RAN_UNTIL_ATTRIBUTE
from libs.telemetry import incident_span_context, incident_trace_id

REPO = Path(__file__).resolve().parents[3]

PROCESS = """
import sys, threading
from pathlib import Path
from libs.observability.log_context import set_log_context
from libs.observability.settings import TelemetrySettings
from libs.telemetry import incident_context, service_telemetry
from libs.workspace.runner import run_command

telemetry = service_telemetry("validator", Path(sys.argv[1]), TelemetrySettings())
telemetry.install()
tracer = telemetry.tracer_provider.get_tracer("test")
workspace = Path(sys.argv[2])
with tracer.start_as_current_span("handle RepairProposed", context=incident_context("inc-with-span")):
    run_command(["python", "-c", "print(1)"], cwd=workspace, timeout_s=30)
    run_command(["python", "-c", "print(sum(i * i for i in range(4_000_000)))"], cwd=workspace, timeout_s=60)

def bare_thread():
    set_log_context("inc-bare-thread", None)
    run_command(["python", "-c", "raise SystemExit(3)"], cwd=workspace, timeout_s=30)

thread = threading.Thread(target=bare_thread)
thread.start()
thread.join()
telemetry.shutdown()
"""


@pytest.fixture(scope="module")
def spans(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The spans the service-like process wrote, once for the module's tests (each reads, none changes them)."""
    folder = tmp_path_factory.mktemp("command-spans")
    trace_file = folder / "traces.jsonl"
    subprocess.run([sys.executable, "-c", PROCESS, str(trace_file), str(folder)], cwd=REPO, check=True)
    return [json.loads(line) for line in trace_file.read_text().splitlines()]


def test_each_command_is_a_span_of_its_incidents_trace(spans: list[dict[str, Any]]) -> None:
    by_name: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_name.setdefault(span["name"], []).append(span)
    [handler] = by_name["handle RepairProposed"]
    first, burner, second = sorted(by_name["workspace command python"], key=lambda s: s["start_ns"])
    assert first["trace_id"] == burner["trace_id"] == handler["trace_id"] == incident_trace_id("inc-with-span")
    assert first["parent_span_id"] == handler["span_id"]
    assert first["attributes"]["process.exit.code"] == "0"
    assert first["attributes"]["modelguard.runner"] == "local"
    assert first["service"] == "modelguard-validator"
    assert second["trace_id"] == incident_trace_id("inc-bare-thread")
    assert second["parent_span_id"] == f"{incident_span_context('inc-bare-thread').span_id:016x}"
    assert second["attributes"]["process.exit.code"] == "3"


def test_each_command_span_carries_the_cpu_time_its_processes_used(spans: list[dict[str, Any]]) -> None:
    """CPU seconds, not wall: a loop of four million squares uses measurably more than printing one number, however
    busy the machine is (it waits for a core without using one)."""
    commands = sorted(spans, key=lambda s: s["start_ns"])
    cpu = [float(s["attributes"][CPU_ATTRIBUTE]) for s in commands if s["name"] == "workspace command python"]
    printed, burned, exited = cpu
    assert 0 < printed < burned and 0 < exited < burned
    assert burned - printed > 0.1


def test_each_command_span_says_when_its_own_process_ran_within_it(spans: list[dict[str, Any]]) -> None:
    """The span also holds the sandbox's preparation and its checks after the process: the process's own time is
    within it, and the longer command's process ran longer."""
    commands = sorted((s for s in spans if s["name"] == "workspace command python"), key=lambda s: s["start_ns"])
    ran = []
    for span in commands:
        attributes = span["attributes"]
        ran_from, ran_until = float(attributes[RAN_FROM_ATTRIBUTE]), float(attributes[RAN_UNTIL_ATTRIBUTE])
        assert span["start_ns"] / 1e9 < ran_from < ran_until < span["end_ns"] / 1e9
        ran.append(ran_until - ran_from)
    printed, burned, _ = ran
    assert burned > printed
