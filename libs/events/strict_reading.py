"""The reference reading of a message body: every check, in the order that says exactly why bytes are refused.

It treats every byte as untrusted and hostile: the envelope and its payload are parsed as JSON by Python's own
reader (NaN, infinity and numbers too large for a float refused), the producer's key is checked before the
payload is read as its event, and the event's canonical form must be the signed payload byte for byte.
`libs.events.codec.open_envelope` reads the common case faster (`quick_reading.py`) and hands everything else
here, so that a refusal always reads as this one says it."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from contracts.envelope import EVENT_PAYLOAD_TYPE, DsseEnvelope
from contracts.registry import Event, UnknownEventType, minor_difference, parse_written, upcast, written_contract
from contracts.upcasting import UpcastRefused
from libs.canonical_json import is_canonical_bytes, strict_loads
from libs.events.signed_event import MalformedMessage, SignedEvent, envelope_bytes
from libs.signing.dsse import SignatureError, decode_payload, verify_envelope
from libs.signing.keys import KeyRegistry


def open_strictly(raw: bytes, registry: KeyRegistry) -> SignedEvent:
    """Parse, verify and validate a message body. Raises MalformedMessage with a reason."""
    try:
        document = strict_loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise MalformedMessage("not-json", str(exc)[:200]) from exc
    try:
        envelope = DsseEnvelope.model_validate(document)
    except ValidationError as exc:
        raise MalformedMessage("not-an-envelope", str(exc)[:300]) from exc
    if envelope.payloadType != EVENT_PAYLOAD_TYPE:
        raise MalformedMessage("wrong-payload-type", envelope.payloadType[:100])
    try:
        payload = decode_payload(envelope)
        event_document = strict_loads(payload)
    except (SignatureError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise MalformedMessage("bad-payload", str(exc)[:200]) from exc
    producer = event_document.get("meta", {}).get("producer") if isinstance(event_document, dict) else None
    if not isinstance(producer, str):
        raise MalformedMessage("schema-violation", "event has no meta.producer")
    try:
        signer = verify_envelope(envelope, registry, expected_owner=producer, payload=payload)
    except SignatureError as exc:
        raise MalformedMessage("bad-signature", str(exc)[:300]) from exc
    try:
        written = parse_written(event_document, payload)
    except UnknownEventType as exc:
        raise MalformedMessage("unknown-event-type", str(exc)[:200]) from exc
    except ValidationError as exc:
        raise MalformedMessage("schema-violation", str(exc)[:300]) from exc
    try:
        canonical = is_canonical_bytes(_signed_document(written, event_document), payload)
    except ValueError as exc:  # "inf" as text reads into a float field as infinity: no canonical JSON holds it
        raise MalformedMessage("non-canonical-payload", f"payload holds a number JSON cannot carry: {exc}") from exc
    if not canonical:
        raise MalformedMessage("non-canonical-payload", "payload is not the canonical JSON of its event")
    try:
        event = upcast(written)  # a past major's event, read as today's contract; the signed bytes stay as written
    except (UpcastRefused, ValidationError) as exc:
        raise MalformedMessage("upcast-refused", str(exc)[:300]) from exc
    return SignedEvent(event, envelope, envelope_bytes(envelope), signer)


def _signed_document(event: Event[Any], document: dict[str, Any]) -> Any:
    """The document whose canonical JSON the payload must be, byte for byte, for the event as read in the contract
    it was written to (a past major's too, before it is upcast).

    Of the reader's own version: the typed event (what `event_bytes` encodes). Of an older minor: the same, less the
    fields its writer did not know (they took their defaults on reading). Of a newer minor: the document itself,
    whose unknown fields the reader ignored; the fields it knows were validated strictly all the same."""
    ahead = minor_difference(
        event.meta.event_version, written_contract(event.meta.event_type, event.meta.event_version)
    )
    if ahead == 0:
        return event.model_dump(mode="json")
    if ahead < 0:
        return event.model_dump(mode="json", exclude_unset=True)
    return document
