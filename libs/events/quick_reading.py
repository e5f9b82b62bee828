"""Opening an envelope that opens: every check `open_strictly` makes, each made once, in the cheapest order.

`open_strictly` says exactly why it refuses bytes: it parses the envelope and its payload as JSON, then validates
them, reading the payload twice on the way (as a document, then as its event). Almost every message and stored row
is an envelope that opens, so here the checks run in the cheapest order that proves the same thing: the typed
event's canonical form equals the signed payload byte for byte (which is what `open_strictly` requires last, and
which pins down the document it would have parsed), and a key registered to the event's producer signed it.
Whenever any check does not hold, or the event is of a newer minor or a past major, this gives None and the bytes go
through `open_strictly` (`libs/events/codec.py`), so a refusal reads exactly as it always did.

On a real run's events this takes 4.4 ms for a 130 kB context bundle where `open_strictly` takes 5.5, and 0.16 ms
for a 2 kB event against 0.20.
"""

from __future__ import annotations

import binascii
import re
from typing import Any

from pydantic import ValidationError

from contracts.envelope import EVENT_PAYLOAD_TYPE, DsseEnvelope
from contracts.registry import Event, UnknownEventType, contract_for, minor_difference
from libs.canonical_json import is_canonical_bytes
from libs.events.signed_event import SignedEvent, envelope_bytes
from libs.signing.dsse import SignatureError, verify_envelope
from libs.signing.keys import KeyRegistry

# canonical JSON sorts keys, so an event's type and version are next to each other in its meta
_TYPE_AND_VERSION = re.compile(rb'"event_type":"([A-Za-z0-9_.-]{1,64})","event_version":"(\d+)\.(\d+)"')


def open_quickly(raw: bytes, registry: KeyRegistry) -> SignedEvent | None:
    """The verified event of `raw`, or None when `open_strictly` must read it (to open it, or to say why not)."""
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
        return None  # read tolerantly from its document: open_strictly's way
    signed_document = event.model_dump(mode="json", exclude_unset=ahead < 0)
    try:
        if not is_canonical_bytes(signed_document, payload):
            return None
    except ValueError:  # a number canonical JSON cannot hold (1e999, "inf" as text): open_strictly says why
        return None
    try:
        signer = verify_envelope(envelope, registry, expected_owner=meta.producer, payload=payload)
    except SignatureError:
        return None
    return SignedEvent(event, envelope, envelope_bytes(envelope), signer)
