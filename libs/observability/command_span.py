"""A span around each workspace command (the sandbox's runs are most of an incident's time).

The span's parent is the span current where the command is started: within a service, the handler's span of
the incident's trace. Where nothing is current (a thread that did not inherit the context), it hangs from the
incident's root span when the log context names the incident, so it still lands in the incident's trace.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode

from libs.observability.log_context import INCIDENT_ID

TRACER = "modelguard.workspace"


def _parent() -> Context | None:
    if trace.get_current_span().get_span_context().is_valid:
        return None  # the current context
    incident = INCIDENT_ID.get()
    if incident is None:
        return None
    from libs.telemetry import incident_context

    return incident_context(incident)


@contextmanager
def command_span(argv: Sequence[str], cwd: Path, where: str) -> Iterator[Span]:
    """``where``: ``local`` (this process's sandbox) or the workspace runner's address."""
    tracer = trace.get_tracer(TRACER)
    name = "workspace command " + (Path(argv[0]).name if argv else "?")
    attributes = {
        "process.command_args": list(argv)[:20],
        "modelguard.workspace": str(cwd),
        "modelguard.runner": where,
    }
    with tracer.start_as_current_span(name, context=_parent(), attributes=attributes) as span:
        yield span


CPU_ATTRIBUTE = "modelguard.command.cpu_s"
"""The CPU seconds the command's processes used (user and system), where the sandbox measured them."""
RAN_FROM_ATTRIBUTE = "modelguard.command.ran_from"
RAN_UNTIL_ATTRIBUTE = "modelguard.command.ran_until"
"""When the command's own process ran: let go once confined, and reaped (seconds since the epoch)."""


def record_exit(
    span: Span, returncode: int, failure: str | None, cpu_s: float | None = None, ran: tuple[float, float] | None = None
) -> None:
    """``ran``: when the command itself ran (seconds since the epoch), where the sandbox measured it: the span also
    holds ModelGuard's checks after it and, where the command was not prepared before the span opened (a declared
    environment, the workspace runner), the preparation of its sandbox: neither is the command's time."""
    span.set_attribute("process.exit.code", returncode)
    if cpu_s is not None:
        span.set_attribute(CPU_ATTRIBUTE, cpu_s)
    if ran is not None:
        span.set_attribute(RAN_FROM_ATTRIBUTE, ran[0])
        span.set_attribute(RAN_UNTIL_ATTRIBUTE, ran[1])
    if failure is not None:
        span.set_status(Status(StatusCode.ERROR, failure[:200]))
