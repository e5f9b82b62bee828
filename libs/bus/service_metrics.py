"""A service's own metrics: events in, out and dead-lettered, and how long its handler took.

The service is the resource's `service.name`; the attributes name the event type (and the dead-letter reason),
never an incident or event id, so the number of series stays small.
"""

from __future__ import annotations

from opentelemetry.metrics import Meter

EVENTS_IN = "modelguard.events.in"
EVENTS_OUT = "modelguard.events.out"
EVENTS_DEAD_LETTERED = "modelguard.events.dead_lettered"
HANDLER_DURATION = "modelguard.handler.duration"


class ServiceMetrics:
    def __init__(self, meter: Meter) -> None:
        self._in = meter.create_counter(EVENTS_IN, unit="{event}", description="messages received")
        self._out = meter.create_counter(EVENTS_OUT, unit="{event}", description="signed events published")
        self._dead = meter.create_counter(
            EVENTS_DEAD_LETTERED, unit="{event}", description="messages sent to the dead-letter topic"
        )
        self._duration = meter.create_histogram(
            HANDLER_DURATION, unit="s", description="time in the service's handler for one input"
        )

    def received(self, topic: str, count: int = 1) -> None:
        self._in.add(count, {"topic": topic})

    def published(self, event_type: str) -> None:
        self._out.add(1, {"event_type": event_type})

    def dead_lettered(self, reason: str) -> None:
        self._dead.add(1, {"reason": reason})

    def handled(self, event_type: str, seconds: float, outcome: str) -> None:
        """`outcome`: ok, rejected, retry or error."""
        self._duration.record(seconds, {"event_type": event_type, "outcome": outcome})
