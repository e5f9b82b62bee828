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


@pytest.fixture(scope="module")
def traced_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    with running_stack(tmp_path_factory.mktemp("traced"), {"MODELGUARD_METRICS_EXPORT_INTERVAL_MS": "500"}) as stack:
        yield stack


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_one_trace_spans_all_seven_services(traced_stack: RunningStack) -> None:
    reported = submit(traced_stack.settings, CHURN, "trace-run-1", 42)
    wait_for_run(traced_stack.settings, reported, timeout_s=600)
    incident = reported.signed.event.meta.incident_id
    time.sleep(1.0)  # the ledger's span ends after its append, which the wait saw

    spans = _lines(traced_stack.settings.home / "traces.jsonl")
    of_incident = [s for s in spans if s["attributes"].get("messaging.kafka.message.key") == repr(incident.encode())]
    traces = {s["trace_id"] for s in of_incident}
    services = {s["service"] for s in of_incident}

    assert traces == {incident_trace_id(incident)}
    assert services == {f"modelguard-{s}" for s in SERVICES}
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


def test_every_service_counts_its_events_and_times_its_handler(traced_stack: RunningStack) -> None:
    reported = submit(traced_stack.settings, CHURN, "trace-run-2", 42)
    wait_for_run(traced_stack.settings, reported, timeout_s=600)
    path = traced_stack.settings.home / "metrics.jsonl"
    producers = [s for s in SERVICES if s != "ledger"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        totals = _metric_totals(path)
        # the ledger's counter reaches the metrics file on its next export, after the wait saw the ledger
        if all(totals.get((f"modelguard-{s}", EVENTS_OUT), 0) >= 1 for s in producers) and (
            totals.get(("modelguard-ledger", EVENTS_IN), 0) >= 14
        ):
            break
        time.sleep(0.5)

    for service in SERVICES:
        name = f"modelguard-{service}"
        assert totals.get((name, EVENTS_IN), 0) >= 1, f"{service} counted no input"
        assert totals.get((name, HANDLER_DURATION), 0) >= 1, f"{service} timed no handler"
    for service in producers:
        assert totals.get((f"modelguard-{service}", EVENTS_OUT), 0) >= 1, f"{service} counted no output"
    assert totals[("modelguard-ledger", EVENTS_IN)] >= 14  # two runs of seven events each


def test_what_each_service_put_in_the_ledger_is_what_the_asyncapi_map_says_it_produces(
    traced_stack: RunningStack,
) -> None:
    produced = {(row.producer, row.event_type) for row in traced_stack.ledger.events_after(0, 10_000)}
    assert len(produced) >= 7
    for producer, event_type in produced:
        assert event_type in SERVICE_CHANNELS[producer].produces, f"{producer} produced {event_type}"
