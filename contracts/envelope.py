"""The wire format of every ModelGuard message: a DSSE envelope around the canonical JSON of an event.

DSSE (Dead Simple Signing Envelope, secure-systems-lab/dsse): the signature covers the pre-authentication
encoding (PAE) of the payload type and the payload bytes, never the JSON around them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

EVENT_PAYLOAD_TYPE = "application/vnd.modelguard.event+json"


class DsseSignature(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    keyid: str = Field(min_length=1, max_length=128)
    sig: str = Field(min_length=1, description="base64 of the Ed25519 signature over the PAE")


class DsseEnvelope(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    payloadType: str = Field(min_length=1, max_length=256)
    payload: str = Field(min_length=1, description="base64 of the canonical JSON of the event")
    signatures: list[DsseSignature] = Field(min_length=1, max_length=8)


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding."""
    type_bytes = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(type_bytes), type_bytes, len(payload), payload)
