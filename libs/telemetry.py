"""OpenTelemetry for a service process: traces and metrics, to an OTLP collector and/or JSON-lines files.

Configuration (environment):
- `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`, `…_METRICS_ENDPOINT`): OTLP to a collector, over HTTP
  (`http/protobuf`, the default) or gRPC as `OTEL_EXPORTER_OTLP_PROTOCOL` (or `…_TRACES_PROTOCOL`,
  `…_METRICS_PROTOCOL`) says, with the exporter's other standard `OTEL_EXPORTER_OTLP_*` settings (headers,
  timeout, certificate).
- `OTEL_SERVICE_NAME`: the resource's `service.name`, instead of `modelguard-<service>`.
- `MODELGUARD_TRACE_FILE`: one JSON line per finished span (the embedded stack sets it).
- `MODELGUARD_METRICS_FILE`: one JSON line per metric point at each export; by default `metrics.jsonl` beside
  the trace file. `MODELGUARD_METRICS_EXPORT_INTERVAL_MS` (default 15000) is how often the file is written.

These are parsed once, with the process's settings (``TelemetrySettings``, ``libs/observability/settings.py``);
the OTLP exporters read their endpoint, headers, timeout and certificate variables themselves.

Trace context travels in Kafka headers (`traceparent`). Every incident has one trace: its id is derived from
the incident id, so the first event of an incident (and a CI retry of it) carries a `traceparent` naming that
trace even when its producer traced nothing, and every service's spans for the incident join it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from libs.observability.settings import TelemetrySettings
from libs.telemetry_files import JsonLinesMetricExporter, JsonLinesSpanExporter


@dataclass(frozen=True)
class ServiceTelemetry:
    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    def install(self) -> None:
        """This process's tracer provider for code that takes the global one (the workspace command spans), and
        spans for every outgoing HTTP call (``libs.observability.http_instrumentation``). For a service's
        process, once."""
        from libs.observability.http_instrumentation import instrument_http_clients

        trace.set_tracer_provider(self.tracer_provider)
        instrument_http_clients(self.tracer_provider)

    def shutdown(self) -> None:
        """Flush and close the exporters (the last metric points included)."""
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


def _resource(service: str, settings: TelemetrySettings) -> Resource:
    """``OTEL_SERVICE_NAME`` when set, else ``modelguard-<service>`` (``OTEL_RESOURCE_ATTRIBUTES`` is read by
    ``Resource.create``)."""
    attributes = {"service.namespace": "modelguard", "service.name": settings.service_name or f"modelguard-{service}"}
    return Resource.create(attributes)


def _otlp_span_exporter(settings: TelemetrySettings) -> SpanExporter:
    if settings.traces.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter

        return GrpcSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _otlp_metric_exporter(settings: TelemetrySettings) -> MetricExporter:
    if settings.metrics.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetricExporter

        return GrpcMetricExporter()
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()


def tracer_provider(service: str, trace_file: Path | None, settings: TelemetrySettings) -> TracerProvider:
    provider = TracerProvider(resource=_resource(service, settings))
    if trace_file is not None:
        provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(trace_file)))
    if settings.traces.exported:
        provider.add_span_processor(BatchSpanProcessor(_otlp_span_exporter(settings)))
    return provider


def metrics_file(trace_file: Path | None, settings: TelemetrySettings) -> Path | None:
    if settings.metrics_file is not None:
        return settings.metrics_file
    return trace_file.with_name("metrics.jsonl") if trace_file is not None else None


def meter_provider(service: str, trace_file: Path | None, settings: TelemetrySettings) -> MeterProvider:
    readers: list[MetricReader] = []
    file = metrics_file(trace_file, settings)
    if file is not None:
        interval = settings.metrics_export_interval_ms
        readers.append(PeriodicExportingMetricReader(JsonLinesMetricExporter(file), export_interval_millis=interval))
    if settings.metrics.exported:
        readers.append(PeriodicExportingMetricReader(_otlp_metric_exporter(settings)))
    return MeterProvider(metric_readers=readers, resource=_resource(service, settings))


def service_telemetry(service: str, trace_file: Path | None, settings: TelemetrySettings) -> ServiceTelemetry:
    """The service's tracer and meter providers: spans and metric points to ``trace_file`` (and the metrics file
    beside it) and to OTLP as ``settings`` say."""
    return ServiceTelemetry(
        tracer_provider(service, trace_file, settings), meter_provider(service, trace_file, settings)
    )


def _incident_digest(incident_id: str) -> bytes:
    return hashlib.sha256(f"modelguard-incident-trace:{incident_id}".encode()).digest()


def incident_span_context(incident_id: str) -> SpanContext:
    """The incident's trace and the (never recorded) root span every service's spans descend from."""
    digest = _incident_digest(incident_id)
    trace_id = int.from_bytes(digest[:16], "big") or 1
    span_id = int.from_bytes(digest[16:24], "big") or 1
    return SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))


def incident_trace_id(incident_id: str) -> str:
    return f"{incident_span_context(incident_id).trace_id:032x}"


def incident_traceparent(incident_id: str) -> str:
    """The W3C `traceparent` header value that opens the incident's trace."""
    context = incident_span_context(incident_id)
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-01"


def incident_context(incident_id: str) -> Context:
    """An OpenTelemetry context to start spans in, so that they belong to the incident's trace."""
    return trace.set_span_in_context(NonRecordingSpan(incident_span_context(incident_id)))
