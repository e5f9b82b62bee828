"""JSON-lines exporters for spans and metrics: what the embedded stack writes where production sends OTLP."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from opentelemetry.sdk.metrics.export import (
    HistogramDataPoint,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    NumberDataPoint,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


class _JsonLines:
    """One file opened for appending; each record is written as one line with one write call, so several
    processes can append to the same file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._out: IO[str] = path.open("a", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        with self._lock:
            for record in records:
                self._out.write(json.dumps(record, sort_keys=True) + "\n")
            self._out.flush()

    def close(self) -> None:
        with self._lock:
            self._out.close()


class JsonLinesSpanExporter(SpanExporter):
    """Appends one JSON line per finished span."""

    def __init__(self, path: Path) -> None:
        self._lines = _JsonLines(path)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self._lines.write([_span_record(span) for span in spans])
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._lines.close()


def _span_record(span: ReadableSpan) -> dict[str, Any]:
    context, parent = span.get_span_context(), span.parent
    return {
        "name": span.name,
        "trace_id": f"{context.trace_id:032x}" if context else None,
        "span_id": f"{context.span_id:016x}" if context else None,
        "parent_span_id": f"{parent.span_id:016x}" if parent else None,
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "service": span.resource.attributes.get("service.name"),
        "attributes": {k: str(v) for k, v in (span.attributes or {}).items()},
    }


class JsonLinesMetricExporter(MetricExporter):
    """Appends one JSON line per data point at each export; the points are cumulative, so a metric's last line
    for a set of attributes is its total so far."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._lines = _JsonLines(path)

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **_: Any) -> MetricExportResult:
        records = []
        for resource_metrics in metrics_data.resource_metrics:
            service = resource_metrics.resource.attributes.get("service.name")
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    for point in metric.data.data_points:
                        records.append({"service": service, "name": metric.name, **_point_record(point)})
        self._lines.write(records)
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **_: Any) -> None:
        self._lines.close()


def _point_record(point: object) -> dict[str, Any]:
    attributes = {k: str(v) for k, v in (getattr(point, "attributes", None) or {}).items()}
    record: dict[str, Any] = {"attributes": attributes, "time_ns": getattr(point, "time_unix_nano", None)}
    if isinstance(point, NumberDataPoint):
        record["value"] = point.value
    elif isinstance(point, HistogramDataPoint):
        record.update(count=point.count, sum=point.sum, min=point.min, max=point.max)
    return record
