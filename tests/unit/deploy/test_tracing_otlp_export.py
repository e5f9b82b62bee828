"""With OTEL_EXPORTER_OTLP_ENDPOINT set, spans and metrics go to the collector over OTLP/HTTP."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from libs.bus.service_metrics import EVENTS_OUT, ServiceMetrics
from libs.settings import load_settings
from libs.telemetry import service_telemetry


class Collector(ThreadingHTTPServer):
    received: list[tuple[str, bytes]]


class _Receive(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        assert isinstance(self.server, Collector)
        self.server.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector(("127.0.0.1", 0), _Receive)
    server.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_spans_and_metrics_reach_the_collector(collector: Collector, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{collector.server_address[1]}")
    monkeypatch.delenv("MODELGUARD_METRICS_FILE", raising=False)
    telemetry = service_telemetry("publisher", None, load_settings().telemetry)
    with telemetry.tracer_provider.get_tracer("test").start_as_current_span("handle RepairValidated"):
        ServiceMetrics(telemetry.meter_provider.get_meter("test")).published("Published")
    telemetry.shutdown()

    bodies = dict(collector.received)
    spans = ExportTraceServiceRequest.FromString(bodies["/v1/traces"])
    [resource_spans] = spans.resource_spans
    service = {a.key: a.value.string_value for a in resource_spans.resource.attributes}["service.name"]
    assert service == "modelguard-publisher"
    assert [s.name for s in resource_spans.scope_spans[0].spans] == ["handle RepairValidated"]
    metrics = ExportMetricsServiceRequest.FromString(bodies["/v1/metrics"])
    names = {m.name for rm in metrics.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert EVENTS_OUT in names
