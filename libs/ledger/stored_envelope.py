"""Opening a stored envelope for the audit: every check `open_envelope` makes, each made once.

`open_envelope` is written for untrusted bytes off the wire and says exactly why it refuses them: it parses the
envelope and its payload as JSON, then validates them, reading the payload twice on the way (as a document, then
as its event). Here the common case is an envelope that passes, so the checks run in the cheapest order that
proves the same thing: the typed event's canonical form equals the signed payload byte for byte (which is what
`open_envelope` requires last, and which pins down the document it would have parsed), and a key registered to the
event's producer signed it. Whenever any check does not hold, or the event is of a newer minor, the row goes through
`open_envelope` itself, so a refusal reads exactly as it always did.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from pydantic import ValidationError

from contracts.envelope import EVENT_PAYLOAD_TYPE, DsseEnvelope, pae
from contracts.registry import Event, UnknownEventType, contract_for, minor_difference
from libs.canonical_json import is_canonical_bytes
from libs.events.codec import SignedEvent, envelope_bytes, open_envelope
from libs.signing.keys import KeyRegistry

# canonical JSON sorts keys, so an event's type and version are next to each other in its meta
_TYPE_AND_VERSION = re.compile(rb'"event_type":"([A-Za-z0-9_.-]{1,64})","event_version":"(\d+)\.(\d+)"')


def open_stored(raw: bytes, registry: KeyRegistry) -> SignedEvent:
    """The verified event of a stored envelope; raises MalformedMessage as `open_envelope` does."""
    return _opened(raw, registry) or open_envelope(raw, registry)


def _opened(raw: bytes, registry: KeyRegistry) -> SignedEvent | None:
    try:
        envelope = DsseEnvelope.model_validate_json(raw)
        if envelope.payloadType != EVENT_PAYLOAD_TYPE:
            return None
        payload = binascii.a2b_base64(envelope.payload, strict_mode=True)
        found = _TYPE_AND_VERSION.search(payload)
        if found is None:
            return None
        contract = contract_for(found.group(1).decode())
        event: Event[Any] = contract.event_model.model_validate_json(payload)
    except (ValidationError, ValueError, binascii.Error, UnknownEventType):
        return None
    meta = event.meta
    if meta.event_type != contract.event_type or meta.event_version.split(".")[0] != str(contract.major):
        return None
    ahead = minor_difference(meta.event_version, contract)
    if ahead > 0:
        return None  # read tolerantly from its document: open_envelope's way
    signed_document = event.model_dump(mode="json", exclude_unset=ahead < 0)
    try:
        if not is_canonical_bytes(signed_document, payload):
            return None
    except ValueError:  # a number canonical JSON cannot hold (1e999, "inf" as text): open_envelope says why
        return None
    signer = _signer(envelope, payload, meta.producer, registry)
    return None if signer is None else SignedEvent(event, envelope, envelope_bytes(envelope), signer)


def _signer(envelope: DsseEnvelope, payload: bytes, producer: str, registry: KeyRegistry) -> str | None:
    """The owner of the first signature by a key registered to `producer` that verifies (`verify_envelope`'s rule)."""
    message = pae(envelope.payloadType, payload)
    for signature in envelope.signatures:
        registered = registry.get(signature.keyid)
        if registered is None or registered.owner != producer:
            continue
        try:
            holds = registered.verifies(base64.b64decode(signature.sig, validate=True), message)
        except (binascii.Error, ValueError):
            continue
        if holds:
            return registered.owner
    return None
