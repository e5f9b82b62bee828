"""The churn incident on the embedded stack leaves one trace that every service's spans join, read back from
the trace file, and each service's metrics (events in and out, handler latency) in the metrics file."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contracts.service_channels import SERVICE_CHANNELS
from libs.bus.service_metrics import EVENTS_IN, EVENTS_OUT, HANDLER_DURATION
from libs.telemetry import incident_trace_id
from modelguard.stack import SERVICES
from modelguard.submit import submit, wait_for_run
from tests.e2e.conftest import CHURN
from tests.support.running_stack import RunningStack, running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.broker]


EXPORT_INTERVAL_S = 0.5


@pytest.fixture(scope="module")
def traced_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    interval_ms = str(int(EXPORT_INTERVAL_S * 1000))
    with running_stack(
        tmp_path_factory.mktemp("traced"), {"MODELGUARD_METRICS_EXPORT_INTERVAL_MS": interval_ms}
    ) as stack:
        yield stack


@pytest.fixture(scope="module")
def churn_incident(traced_stack: RunningStack) -> str:
    """One churn run through the stack, for the tests that read what a finished run left behind."""
    reported = submit(traced_stack.settings, CHURN, "trace-run-1", 42)
    wait_for_run(traced_stack.settings, reported, timeout_s=600)
    return reported.signed.event.meta.incident_id


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _incident_spans(path: Path, incident: str) -> list[dict[str, Any]]:
    key = repr(incident.encode())
    return [s for s in _lines(path) if s["attributes"].get("messaging.kafka.message.key") == key]


def test_one_trace_spans_all_seven_services(traced_stack: RunningStack, churn_incident: str) -> None:
    path = traced_stack.settings.home / "traces.jsonl"
    everyone = {f"modelguard-{s}" for s in SERVICES}
    # the ledger's span ends after its append, which the run's wait saw: wait until every service's span is written
    deadline = time.monotonic() + 30
    while {s["service"] for s in _incident_spans(path, churn_incident)} != everyone and time.monotonic() < deadline:
        time.sleep(0.2)

    spans = _lines(path)
    of_incident = _incident_spans(path, churn_incident)
    traces = {s["trace_id"] for s in of_incident}
    services = {s["service"] for s in of_incident}

    assert traces == {incident_trace_id(churn_incident)}
    assert services == everyone
    by_id = {s["span_id"]: s for s in spans}
    processed = [s for s in of_incident if s["name"].endswith(" process")]
    assert processed and all(s["parent_span_id"] for s in processed)
    # a service's processing span descends from the span that published what it consumed, in another service
    crossing = [
        s for s in processed if s["parent_span_id"] in by_id and by_id[s["parent_span_id"]]["service"] != s["service"]
    ]
    assert {s["service"] for s in crossing} >= {f"modelguard-{s}" for s in SERVICES if s != "detector"}


def _metric_totals(path: Path) -> dict[tuple[str, str], float]:
    totals: dict[tuple[str, str], float] = defaultdict(float)
    latest: dict[tuple[str, str, str], float] = {}
    for point in _lines(path) if path.exists() else []:
        value = point.get("value", point.get("count", 0))
        latest[(point["service"], point["name"], json.dumps(point["attributes"], sort_keys=True))] = value
    for (service, name, _), value in latest.items():
        totals[(service, name)] += value
    return totals


def _settled_totals(path: Path, timeout_s: float = 30) -> dict[tuple[str, str], float]:
    """The totals once they have not changed for three export intervals: every count made so far is in the file."""
    totals, quiet_since = _metric_totals(path), time.monotonic()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() - quiet_since < 3 * EXPORT_INTERVAL_S and time.monotonic() < deadline:
        time.sleep(EXPORT_INTERVAL_S / 2)
        latest = _metric_totals(path)
        if latest != totals:
            totals, quiet_since = latest, time.monotonic()
    return totals


def test_every_service_counts_its_events_and_times_its_handler(traced_stack: RunningStack) -> None:
    path = traced_stack.settings.home / "metrics.jsonl"
    before = _settled_totals(path)  # whatever runs came before this test on the same stack
    position = traced_stack.ledger.head_position()
    reported = submit(traced_stack.settings, CHURN, "trace-run-2", 42)
    wait_for_run(traced_stack.settings, reported, timeout_s=600)
    appended = len(traced_stack.ledger.events_after(position, 10_000))  # this run's events, each one ledger input
    producers = [s for s in SERVICES if s != "ledger"]

    def grew(totals: dict[tuple[str, str], float], service: str, metric: str) -> float:
        return totals.get((f"modelguard-{service}", metric), 0) - before.get((f"modelguard-{service}", metric), 0)

    # each service exports its counters every 500 ms: the ledger's last ones land after the wait saw the ledger
    # (it counts redeliveries too, so at least, not exactly, one per appended event)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        totals = _metric_totals(path)
        if all(grew(totals, s, EVENTS_OUT) >= 1 for s in producers) and grew(totals, "ledger", EVENTS_IN) >= appended:
            break
        time.sleep(EXPORT_INTERVAL_S / 2)

    assert appended >= len(producers)  # the run's events: the CI's report and at least one from each producer
    for service in SERVICES:
        assert grew(totals, service, EVENTS_IN) >= 1, f"{service} counted no input of this run"
        assert grew(totals, service, HANDLER_DURATION) >= 1, f"{service} timed no handler of this run"
    for service in producers:
        assert grew(totals, service, EVENTS_OUT) >= 1, f"{service} counted no output of this run"
    assert grew(totals, "ledger", EVENTS_IN) >= appended, "the ledger counted fewer inputs than it appended"


def test_what_each_service_put_in_the_ledger_is_what_the_asyncapi_map_says_it_produces(
    traced_stack: RunningStack, churn_incident: str
) -> None:
    produced = {(row.producer, row.event_type) for row in traced_stack.ledger.events_after(0, 10_000)}
    assert len(produced) >= 7
    for producer, event_type in produced:
        assert event_type in SERVICE_CHANNELS[producer].produces, f"{producer} produced {event_type}"
