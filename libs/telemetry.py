"""OpenTelemetry for a service process: traces and metrics, to an OTLP collector and/or JSON-lines files.

Configuration (environment):
- `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`, `…_METRICS_ENDPOINT`): OTLP over HTTP to a collector,
  with the exporter's other standard `OTEL_EXPORTER_OTLP_*` settings (headers, timeout, certificate).
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
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from libs.telemetry_files import JsonLinesMetricExporter, JsonLinesSpanExporter

DEFAULT_FILE_EXPORT_INTERVAL_MS = 15_000


@dataclass(frozen=True)
class ServiceTelemetry:
    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    def shutdown(self) -> None:
        """Flush and close the exporters (the last metric points included)."""
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


def _otlp_configured(signal: str) -> bool:
    names = ("OTEL_EXPORTER_OTLP_ENDPOINT", f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT")
    return any(os.environ.get(name) for name in names)


def _resource(service: str) -> Resource:
    return Resource.create({"service.name": f"modelguard-{service}", "service.namespace": "modelguard"})


def tracer_provider(service: str, trace_file: Path | None) -> TracerProvider:
    provider = TracerProvider(resource=_resource(service))
    if trace_file is not None:
        provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(trace_file)))
    if _otlp_configured("TRACES"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
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
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
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
