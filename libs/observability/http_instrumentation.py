"""Spans for every outgoing HTTP call: DataHub (GMS through the SDK's ``requests`` session, the MCP server and the
schema registry through ``httpx``) and GitHub (``httpx``). Each span is a child of the span current at the call,
so within a handler it belongs to the incident's trace, and the ``traceparent`` header goes with the request."""

from __future__ import annotations

from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.trace import TracerProvider


def instrument_http_clients(tracer_provider: TracerProvider) -> None:
    """Once per process; a second call is a no-op."""
    httpx = HTTPXClientInstrumentor()
    if not httpx.is_instrumented_by_opentelemetry:
        httpx.instrument(tracer_provider=tracer_provider)
    requests = RequestsInstrumentor()
    if not requests.is_instrumented_by_opentelemetry:
        requests.instrument(tracer_provider=tracer_provider)
