"""Every incident has one trace: its first event's headers open it, spans started in it belong to it, and the
JSON-lines exporter writes what a test (or a person) needs to follow it."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from libs.bus.headers import event_headers
from libs.observability.settings import TelemetrySettings
from libs.telemetry import incident_context, incident_trace_id, tracer_provider
from tests.support.sample_events import Keys, detected, reported


def test_the_first_event_of_an_incident_carries_the_incidents_trace_and_a_retry_the_same_one() -> None:
    keys = Keys("reporter", "detector")
    first, retry, other = reported(keys, "run-1"), reported(keys, "run-2"), reported(keys, "run-1", seed="b")
    incident = first.event.meta.incident_id

    headers = event_headers(first)

    assert retry.event.meta.incident_id == incident != other.event.meta.incident_id
    extracted = TraceContextTextMapPropagator().extract(headers)
    carried = next(iter(extracted.values())).get_span_context()
    assert f"{carried.trace_id:032x}" == incident_trace_id(incident)
    assert event_headers(retry)["traceparent"].split("-")[1] == incident_trace_id(incident)
    assert event_headers(other)["traceparent"].split("-")[1] != incident_trace_id(incident)
    assert event_headers(detected(keys, first))["traceparent"] == headers["traceparent"]


def test_spans_started_in_the_incident_context_are_written_to_the_trace_file(tmp_path: Path) -> None:
    keys = Keys("reporter")
    incident = reported(keys).event.meta.incident_id
    trace_file = tmp_path / "traces.jsonl"
    provider = tracer_provider("detector", trace_file, TelemetrySettings())
    tracer = provider.get_tracer("test")

    server = tracer.start_as_current_span("POST /evaluations", context=incident_context(incident), kind=SpanKind.SERVER)
    with server, tracer.start_as_current_span("publish"):
        pass
    provider.shutdown()

    spans = [json.loads(line) for line in trace_file.read_text().splitlines()]
    assert [s["name"] for s in spans] == ["publish", "POST /evaluations"]
    assert {s["trace_id"] for s in spans} == {incident_trace_id(incident)}
    assert {s["service"] for s in spans} == {"modelguard-detector"}
    assert spans[0]["parent_span_id"] == spans[1]["span_id"]
