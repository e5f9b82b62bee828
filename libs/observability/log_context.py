"""The incident a log line belongs to: context variables the runtime sets for each input it handles.

Context variables follow ``asyncio.to_thread`` into the handler's worker thread, so every line a handler logs
carries the incident and run of its input; the trace and span ids are read from OpenTelemetry's own context
when the line is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

INCIDENT_ID: ContextVar[str | None] = ContextVar("modelguard_incident_id", default=None)
RUN_ID: ContextVar[str | None] = ContextVar("modelguard_run_id", default=None)


def set_log_context(incident_id: str | None, run_id: str | None) -> None:
    """From here on in this context (the consumer's task, and the threads it hands work to), until set again."""
    INCIDENT_ID.set(incident_id)
    RUN_ID.set(run_id)


@contextmanager
def incident_log_context(incident_id: str | None, run_id: str | None) -> Iterator[None]:
    """Within the block, log lines name this incident and run."""
    incident_token = INCIDENT_ID.set(incident_id)
    run_token = RUN_ID.set(run_id)
    try:
        yield
    finally:
        RUN_ID.reset(run_token)
        INCIDENT_ID.reset(incident_token)
