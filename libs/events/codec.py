"""Events to signed envelopes and back, treating every incoming byte as untrusted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from contracts.envelope import EVENT_PAYLOAD_TYPE, DsseEnvelope
from contracts.registry import Event, UnknownEventType, minor_difference, parse_written, upcast, written_contract
from contracts.upcasting import UpcastRefused
from libs.canonical_json import canonical_bytes, is_canonical_bytes, sha256_hex, strict_loads
from libs.signing.dsse import SignatureError, decode_payload, sign_envelope, verify_envelope
from libs.signing.keys import KeyRegistry, SigningKey


class MalformedMessage(ValueError):
    """A message that cannot be accepted; `reason` is short and safe to put in a dead-letter header."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class SignedEvent:
    event: Event[Any]
    envelope: DsseEnvelope
    envelope_bytes: bytes
    signer: str

    @property
    def digest(self) -> str:
        return sha256_hex(self.envelope_bytes)


def event_bytes(event: Event[Any]) -> bytes:
    return canonical_bytes(event.model_dump(mode="json"))


def envelope_bytes(envelope: DsseEnvelope) -> bytes:
    """The canonical JSON of an envelope. Its strings are base64, key ids and a payload type: when none holds a
    character JSON escapes (or might: anything but printable ASCII, and the quote and backslash), it is written out
    directly, keys in sorted order and no whitespace, which is what canonical JSON gives, without a scan of the
    payload by the JSON writer."""
    strings = "".join(
        [envelope.payload, envelope.payloadType, *(t for s in envelope.signatures for t in (s.keyid, s.sig))]
    )
    if not _written_as_is(strings):
        return canonical_bytes(envelope.model_dump(mode="json"))
    signatures = ",".join(f'{{"keyid":"{s.keyid}","sig":"{s.sig}"}}' for s in envelope.signatures)
    head = f'{{"payload":"{envelope.payload}","payloadType":"{envelope.payloadType}"'
    return f'{head},"signatures":[{signatures}]}}'.encode()


_AS_IS = bytes(c for c in range(0x20, 0x7F) if c not in b'"\\')
"""The characters canonical JSON writes as they are, of those an envelope's strings hold: printable ASCII, less the
quote and the backslash."""


def _written_as_is(text: str) -> bool:
    return text.isascii() and not text.encode("ascii").translate(None, _AS_IS)


def seal(event: Event[Any], key: SigningKey) -> SignedEvent:
    if key.owner != event.meta.producer:
        raise SignatureError(f"{key.owner} cannot sign an event produced by {event.meta.producer}")
    envelope = sign_envelope(event_bytes(event), EVENT_PAYLOAD_TYPE, key)
    return SignedEvent(event, envelope, envelope_bytes(envelope), key.owner)


def open_envelope(raw: bytes, registry: KeyRegistry) -> SignedEvent:
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
