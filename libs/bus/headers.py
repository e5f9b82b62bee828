"""Kafka headers: the event's identity repeated outside the body, so tools can route without decoding."""

from __future__ import annotations

from libs.events.codec import SignedEvent

DLQ_REASON = "mg-dlq-reason"
DLQ_DETAIL = "mg-dlq-detail"
DLQ_SERVICE = "mg-dlq-service"
DLQ_SOURCE = "mg-dlq-source"


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
    }


def dead_letter_headers(reason: str, detail: str, service: str, source: str) -> dict[str, str]:
    return {
        DLQ_REASON: reason,
        DLQ_DETAIL: detail[:1000],
        DLQ_SERVICE: service,
        DLQ_SOURCE: source,
    }
