"""How a service's log lines look: one JSON object a line for files and collectors, plain text for a terminal.

``MODELGUARD_LOG_FORMAT`` is ``json`` or ``text``; unset, a terminal on stderr gets text and anything else (a
log file, a container's stdout) JSON. Neither ever holds a colour code. Each line names the service and, where
known, the incident, the CI run, the trace and the span (``log_context``).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any, TextIO

from opentelemetry import trace

from libs.observability.log_context import INCIDENT_ID, RUN_ID


def log_format(stream: TextIO, configured: str | None = None) -> str:
    """``json`` or ``text``: ``configured`` (``LoggingSettings.format``, from the variable) when set, else text on a
    terminal only."""
    if configured is not None:
        return configured
    isatty = getattr(stream, "isatty", None)
    return "text" if isatty is not None and isatty() else "json"


def line_context(service: str) -> dict[str, str]:
    """The ids known where the line is written: service always, the others when set."""
    context = {"service": service}
    if (incident := INCIDENT_ID.get()) is not None:
        context["incident_id"] = incident
    if (run := RUN_ID.get()) is not None:
        context["run_id"] = run
    span = trace.get_current_span().get_span_context()
    if span.is_valid:
        context["trace_id"] = f"{span.trace_id:032x}"
        context["span_id"] = f"{span.span_id:016x}"
    return context


class JsonLineFormatter(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message, the ids, and the traceback."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **line_context(self.service),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class TextLineFormatter(logging.Formatter):
    """``time service LEVEL logger [incident run]: message``, no colour."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        context = line_context(self.service)
        ids = " ".join(context[k] for k in ("incident_id", "run_id") if k in context)
        text = f"{self.formatTime(record)} {self.service} {record.levelname} {record.name}"
        text += (f" [{ids}]" if ids else "") + f": {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def formatter_for(service: str, stream: TextIO, configured: str | None = None) -> logging.Formatter:
    """The formatter of ``service``'s lines on ``stream``; ``configured`` as :func:`log_format` takes it."""
    if log_format(stream, configured) == "json":
        return JsonLineFormatter(service)
    return TextLineFormatter(service)
