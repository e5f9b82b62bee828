"""The churn incident on the embedded stack, seen as an operator sees it: every service's /metrics scraped over
HTTP (the ledger's incidents by outcome and time per phase among them), and every service's log file read as JSON
lines, each service naming the incident."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from libs.events.outcome import outcome_of
from modelguard.health_ports import metrics_url
from modelguard.stack import SERVICES
from modelguard.submit import submit, wait_for_run
from tests.e2e.conftest import CHURN
from tests.support.running_stack import RunningStack, running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.broker]

PHASES = ("detect", "context", "diagnose", "repair", "validate", "publish")
T = TypeVar("T")


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningStack, str, str]]:
    """A stack whose services write JSON lines to their log files (not a terminal), and the churn incident on it:
    (the stack, the incident id, the run's outcome as the ledger's events say)."""
    with running_stack(tmp_path_factory.mktemp("operability")) as stack:
        reported = submit(stack.settings, CHURN, "operability-run-1", 42)
        events = wait_for_run(stack.settings, reported, timeout_s=900)
        run = [e for e in events if getattr(e.event.payload, "run_id", None) == "operability-run-1"]
        yield stack, reported.signed.event.meta.incident_id, outcome_of(run)


def _until(condition: Callable[[], T | None], what: str, timeout_s: float = 60.0) -> T:
    """The condition's first truthy answer, polled; fails naming what it waited for."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = condition()
        if answer:
            return answer
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout_s:.0f} s: {what}")
        time.sleep(0.5)


def _scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(metrics_url(port), timeout=10).raise_for_status().text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_every_service_serves_metrics_and_the_ledger_counts_the_incident(
    incident: tuple[RunningStack, str, str],
) -> None:
    stack, _, outcome = incident
    ports = stack.state.health_ports
    assert sorted(ports) == sorted(SERVICES)

    def ledger_has_it() -> dict[tuple[str, tuple[tuple[str, str], ...]], float] | None:
        samples = _scrape(ports["ledger"])
        counted = samples.get(("modelguard_incidents_total", (("outcome", outcome),)), 0) >= 1
        timed = all(samples.get(("modelguard_phase_duration_seconds_count", (("phase", p),)), 0) >= 1 for p in PHASES)
        return samples if counted and timed else None

    ledger = _until(ledger_has_it, f"the ledger's /metrics counts one {outcome} incident and times every phase")
    assert ledger[("modelguard_incidents_unfinished", ())] == 0
    assert ledger[("modelguard_incidents_stuck", ())] == 0
    for phase in PHASES:
        assert ledger[("modelguard_phase_duration_seconds_sum", (("phase", phase),))] > 0
    diagnosed = sum(ledger.get(("modelguard_diagnoses_total", (("result", r),)), 0) for r in ("completed", "abstained"))
    assert diagnosed == 1
    timings = {p: round(ledger[("modelguard_phase_duration_seconds_sum", (("phase", p),))], 3) for p in PHASES}
    counted = ledger[("modelguard_incidents_total", (("outcome", outcome),))]
    print(f"ledger /metrics: incidents_total{{outcome={outcome}}} = {counted:g}, phase seconds {timings}")

    for name in SERVICES:  # FastStream's messaging metrics: every service consumed something of the incident
        samples = _scrape(ports[name])
        received = sum(v for (metric, _), v in samples.items() if metric == "faststream_received_messages_total")
        assert received >= 1, name
    context = _scrape(ports["context"])
    assert ("modelguard_mcl_records_total", (("reason", ""), ("verdict", "applied"))) in context


def _json_lines(path: Path) -> list[dict[str, Any]]:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    parsed = []
    for line in lines:
        assert "\x1b[" not in line, f"{path.name}: a colour code in {line[:120]!r}"
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            pytest.fail(f"{path.name}: not a JSON line: {line[:200]!r}")
    return parsed


def test_every_services_log_is_json_lines_naming_the_incident(incident: tuple[RunningStack, str, str]) -> None:
    stack, incident_id, _ = incident
    logs = stack.settings.home / "logs"

    def services_naming_it() -> set[str] | None:
        naming = {
            name
            for name in SERVICES
            if any(line.get("incident_id") == incident_id for line in _json_lines(logs / f"{name}.log"))
        }
        return naming if naming == set(SERVICES) else None

    _until(services_naming_it, f"every service's log names {incident_id}")
    for name in SERVICES:
        lines = _json_lines(logs / f"{name}.log")
        assert {line["service"] for line in lines} == {name}
        of_incident = [line for line in lines if line.get("incident_id") == incident_id]
        assert all(line["run_id"] == "operability-run-1" for line in of_incident if "run_id" in line)
        assert any(len(line.get("trace_id", "")) == 32 for line in of_incident), name
