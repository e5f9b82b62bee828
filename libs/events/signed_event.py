"""A signed event as ModelGuard holds it, the byte forms it is signed and sent in, and the refusal of bytes that
are not one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contracts.envelope import DsseEnvelope
from contracts.registry import Event
from libs.canonical_json import canonical_bytes, sha256_hex


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
