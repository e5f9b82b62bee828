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

Trace context travels in Kafka headers (`traceparent`). Every incident has one trace: its id is derived from
the incident id, so the first event of an incident (and a CI retry of it) carries a `traceparent` naming that
trace even when its producer traced nothing, and every service's spans for the incident join it.
"""

from __future__ import annotations

import hashlib
import os
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

from libs.settings import SettingsError
from libs.telemetry_files import JsonLinesMetricExporter, JsonLinesSpanExporter

DEFAULT_FILE_EXPORT_INTERVAL_MS = 15_000


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


def _otlp_configured(signal: str) -> bool:
    names = ("OTEL_EXPORTER_OTLP_ENDPOINT", f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT")
    return any(os.environ.get(name) for name in names)


OTLP_PROTOCOLS = ("http/protobuf", "grpc")


def otlp_protocol(signal: str) -> str:
    """The OTLP transport of a signal (``TRACES`` or ``METRICS``): its own variable, else the general one."""
    for name in (f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        raw = os.environ.get(name, "").strip()
        if raw:
            if raw not in OTLP_PROTOCOLS:
                raise SettingsError(f"{name} must be one of {', '.join(OTLP_PROTOCOLS)}, got {raw!r}")
            return raw
    return "http/protobuf"


def _resource(service: str) -> Resource:
    """``OTEL_SERVICE_NAME`` (and ``OTEL_RESOURCE_ATTRIBUTES``) are read by ``Resource.create``; the service's
    own name is the default only."""
    attributes = {"service.namespace": "modelguard"}
    if not os.environ.get("OTEL_SERVICE_NAME", "").strip():
        attributes["service.name"] = f"modelguard-{service}"
    return Resource.create(attributes)


def _otlp_span_exporter() -> SpanExporter:
    if otlp_protocol("TRACES") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter

        return GrpcSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _otlp_metric_exporter() -> MetricExporter:
    if otlp_protocol("METRICS") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetricExporter

        return GrpcMetricExporter()
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()


def tracer_provider(service: str, trace_file: Path | None) -> TracerProvider:
    provider = TracerProvider(resource=_resource(service))
    if trace_file is not None:
        provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(trace_file)))
    if _otlp_configured("TRACES"):
        provider.add_span_processor(BatchSpanProcessor(_otlp_span_exporter()))
    return provider


def metrics_file(trace_file: Path | None) -> Path | None:
    configured = os.environ.get("MODELGUARD_METRICS_FILE")
    if configured:
        return Path(configured)
    return trace_file.with_name("metrics.jsonl") if trace_file is not None else None


def meter_provider(service: str, trace_file: Path | None) -> MeterProvider:
    readers: list[MetricReader] = []
    file = metrics_file(trace_file)
    if file is not None:
        interval = int(os.environ.get("MODELGUARD_METRICS_EXPORT_INTERVAL_MS") or DEFAULT_FILE_EXPORT_INTERVAL_MS)
        readers.append(PeriodicExportingMetricReader(JsonLinesMetricExporter(file), export_interval_millis=interval))
    if _otlp_configured("METRICS"):
        readers.append(PeriodicExportingMetricReader(_otlp_metric_exporter()))
    return MeterProvider(metric_readers=readers, resource=_resource(service))


def service_telemetry(service: str, trace_file: Path | None) -> ServiceTelemetry:
    return ServiceTelemetry(tracer_provider(service, trace_file), meter_provider(service, trace_file))


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
