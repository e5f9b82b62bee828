"""OTLP as the operator says: `OTEL_SERVICE_NAME` over ModelGuard's own name, gRPC when
`OTEL_EXPORTER_OTLP_PROTOCOL=grpc` (to a real gRPC collector here), and an unknown protocol refused in one line."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from libs.settings import SettingsError, load_settings
from libs.telemetry import service_telemetry


class Collector(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self) -> None:
        self.requests: list[trace_service_pb2.ExportTraceServiceRequest] = []
        self.received = threading.Event()

    def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: grpc.ServicerContext
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        self.requests.append(request)
        self.received.set()
        return trace_service_pb2.ExportTraceServiceResponse()


@pytest.fixture
def collector() -> Iterator[tuple[Collector, int]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = Collector()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, port
    server.stop(grace=None)


def test_spans_go_over_grpc_under_the_operators_service_name(
    collector: tuple[Collector, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    servicer, port = collector
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "churn-diagnoser-eu")
    telemetry = service_telemetry("diagnoser", None, load_settings().telemetry)
    with telemetry.tracer_provider.get_tracer("test").start_as_current_span("handle ContextCollected"):
        pass
    telemetry.tracer_provider.force_flush()
    assert servicer.received.wait(30)
    telemetry.shutdown()
    [resource_spans] = [rs for request in servicer.requests for rs in request.resource_spans]
    attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
    assert attributes["service.name"] == "churn-diagnoser-eu"
    assert attributes["service.namespace"] == "modelguard"
    assert [s.name for s in resource_spans.scope_spans[0].spans] == ["handle ContextCollected"]


def test_without_the_variable_the_name_is_modelguards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    telemetry = service_telemetry("ledger", None, load_settings().telemetry)
    assert telemetry.tracer_provider.resource.attributes["service.name"] == "modelguard-ledger"


def test_the_protocol_per_signal_and_a_bad_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_PROTOCOL", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", raising=False)
    assert load_settings().telemetry.traces.protocol == "http/protobuf"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")
    telemetry = load_settings().telemetry
    assert (telemetry.traces.protocol, telemetry.metrics.protocol) == ("grpc", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon")
    with pytest.raises(SettingsError, match="OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, grpc"):
        load_settings()
