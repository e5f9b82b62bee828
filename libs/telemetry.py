"""OpenTelemetry tracing: spans per handled message, `traceparent` carried in Kafka headers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class JsonLinesSpanExporter(SpanExporter):
    """Appends one JSON line per finished span; production points OTLP at a collector instead."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._out: IO[str] = path.open("a", encoding="utf-8")

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            context = span.get_span_context()
            parent = span.parent
            self._out.write(
                json.dumps(
                    {
                        "name": span.name,
                        "trace_id": f"{context.trace_id:032x}" if context else None,
                        "span_id": f"{context.span_id:016x}" if context else None,
                        "parent_span_id": f"{parent.span_id:016x}" if parent else None,
                        "start_ns": span.start_time,
                        "end_ns": span.end_time,
                        "service": span.resource.attributes.get("service.name"),
                        "attributes": {k: str(v) for k, v in (span.attributes or {}).items()},
                    }
                )
                + "\n"
            )
        self._out.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._out.close()


def tracer_provider(service: str, trace_file: Path | None) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": f"modelguard-{service}"}))
    if trace_file is not None:
        provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(trace_file)))
    return provider
