"""Events to signed envelopes and back, treating every incoming byte as untrusted."""

from __future__ import annotations

from typing import Any

from contracts.envelope import EVENT_PAYLOAD_TYPE
from contracts.registry import Event
from libs.events.quick_reading import open_quickly
from libs.events.signed_event import MalformedMessage, SignedEvent, envelope_bytes, event_bytes
from libs.events.strict_reading import open_strictly
from libs.signing.dsse import SignatureError, sign_envelope
from libs.signing.keys import KeyRegistry, SigningKey

__all__ = ["MalformedMessage", "SignedEvent", "envelope_bytes", "event_bytes", "open_envelope", "seal"]


def seal(event: Event[Any], key: SigningKey) -> SignedEvent:
    if key.owner != event.meta.producer:
        raise SignatureError(f"{key.owner} cannot sign an event produced by {event.meta.producer}")
    envelope = sign_envelope(event_bytes(event), EVENT_PAYLOAD_TYPE, key)
    return SignedEvent(event, envelope, envelope_bytes(envelope), key.owner)


def open_envelope(raw: bytes, registry: KeyRegistry) -> SignedEvent:
    """Parse, verify and validate a message body. Raises MalformedMessage with a reason.

    The common case, an envelope that opens, is read by `open_quickly`, which proves what `open_strictly` proves
    with each check made once; anything it does not open goes through `open_strictly`, so an event opened is the
    same event and a refusal gives the same reason either way (`tests/unit/events/test_envelope_opening.py`)."""
    return open_quickly(raw, registry) or open_strictly(raw, registry)
