"""Sign and verify DSSE envelopes with Ed25519."""

from __future__ import annotations

import base64
import binascii

from contracts.envelope import DsseEnvelope, DsseSignature, pae
from libs.signing.keys import KeyRegistry, SigningKey


class SignatureError(ValueError):
    """The envelope is not signed by a key the registry knows for the expected signer."""


def sign_envelope(payload: bytes, payload_type: str, key: SigningKey) -> DsseEnvelope:
    signature = key.sign(pae(payload_type, payload))
    return DsseEnvelope(
        payloadType=payload_type,
        payload=base64.b64encode(payload).decode(),
        signatures=[DsseSignature(keyid=key.keyid, sig=base64.b64encode(signature).decode())],
    )


def decode_payload(envelope: DsseEnvelope) -> bytes:
    try:
        return base64.b64decode(envelope.payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise SignatureError(f"payload is not base64: {exc}") from exc


def verify_envelope(
    envelope: DsseEnvelope, registry: KeyRegistry, expected_owner: str | None = None, payload: bytes | None = None
) -> str:
    """Return the owner of the first valid signature; raise SignatureError when none verifies.

    With `expected_owner`, only a key registered to that owner counts: a detector key cannot sign
    a publisher's event. `payload`: `decode_payload(envelope)`, when the caller has it already.
    """
    if payload is None:
        payload = decode_payload(envelope)
    message = pae(envelope.payloadType, payload)
    reasons: list[str] = []
    for signature in envelope.signatures:
        registered = registry.get(signature.keyid)
        if registered is None:
            reasons.append(f"unknown key {signature.keyid}")
            continue
        if expected_owner is not None and registered.owner != expected_owner:
            reasons.append(f"key {signature.keyid} belongs to {registered.owner}, not {expected_owner}")
            continue
        try:
            holds = registered.verifies(base64.b64decode(signature.sig, validate=True), message)
        except (binascii.Error, ValueError):
            holds = False
        if not holds:
            reasons.append(f"bad signature by {signature.keyid}")
            continue
        return registered.owner
    raise SignatureError("; ".join(reasons) or "no signatures")
