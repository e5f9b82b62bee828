"""Signing a publication's attestation: an in-toto Statement in a DSSE envelope, signed with Ed25519."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from libs.attestation.predicate_of import predicate_of
from libs.attestation.statement import IN_TOTO_PAYLOAD_TYPE, PREDICATE_TYPE, STATEMENT_TYPE, Statement
from libs.attestation.subject_of import subject_of
from libs.canonical_json import canonical_bytes, sha256_hex
from libs.events.codec import SignedEvent, envelope_bytes
from libs.signing.dsse import sign_envelope
from libs.signing.keys import SigningKey


@dataclass(frozen=True)
class Attestation:
    """`envelope_bytes` is what is stored and published; `digest` (its sha256) is how publications name it."""

    envelope_bytes: bytes
    digest: str
    statement: dict[str, Any]


def statement_of(source: SignedEvent) -> Statement:
    predicate = predicate_of(source)  # first: it refuses an event no publication is made from
    return Statement(
        type_=STATEMENT_TYPE,
        subject=[subject_of(source.event.meta.incident_id, source.event.payload)],
        predicateType=PREDICATE_TYPE,
        predicate=predicate.model_dump(mode="json"),
    )


def attest_publication(source: SignedEvent, key: SigningKey) -> Attestation:
    """Attest what a publication made from `source` (the publisher's verified input) stands on.

    Deterministic: the statement has no clock in it and Ed25519 signatures are deterministic, so the same
    source and key give byte-identical envelopes (and so the same digest) on every retry.
    Raises NotAttestable for an event no publication is made from.
    """
    document = statement_of(source).document()
    envelope = sign_envelope(canonical_bytes(document), IN_TOTO_PAYLOAD_TYPE, key)
    raw = envelope_bytes(envelope)
    return Attestation(envelope_bytes=raw, digest=sha256_hex(raw), statement=document)
