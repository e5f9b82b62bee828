"""Kafka headers: the event's identity repeated outside the body, so tools can route without decoding.

`traceparent` opens the incident's trace (see libs.telemetry): a producer that traces nothing (the CI
reporter, `republish`) still puts its event in the incident's one trace. Inside a service, FastStream's
telemetry middleware replaces it with the span that is publishing, which belongs to the same trace.
"""

from __future__ import annotations

from libs.events.codec import SignedEvent
from libs.telemetry import incident_traceparent

DLQ_REASON = "mg-dlq-reason"
DLQ_DETAIL = "mg-dlq-detail"
DLQ_SERVICE = "mg-dlq-service"
DLQ_SOURCE = "mg-dlq-source"
TRACEPARENT = "traceparent"


def event_headers(signed: SignedEvent) -> dict[str, str]:
    meta = signed.event.meta
    return {
        "mg-event-type": meta.event_type,
        "mg-event-version": meta.event_version,
        "mg-event-id": meta.event_id,
        "mg-incident-id": meta.incident_id,
        "mg-producer": meta.producer,
        "mg-causation-id": meta.causation_id or "",
        "content-type": "application/dsse+json",
        TRACEPARENT: incident_traceparent(meta.incident_id),
    }


def dead_letter_headers(reason: str, detail: str, service: str, source: str) -> dict[str, str]:
    return {
        DLQ_REASON: reason,
        DLQ_DETAIL: detail[:1000],
        DLQ_SERVICE: service,
        DLQ_SOURCE: source,
    }
