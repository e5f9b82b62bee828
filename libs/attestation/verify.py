"""Verifying an attestation offline, with nothing but the public keys: every refusal comes with a reason."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from contracts.envelope import DsseEnvelope
from libs.attestation.claims import describe
from libs.attestation.evidence import check_evidence
from libs.attestation.predicate import IncidentPredicate
from libs.attestation.roles import ATTESTER_ROLE
from libs.attestation.statement import IN_TOTO_PAYLOAD_TYPE, PREDICATE_TYPE, STATEMENT_TYPE, Statement, Subject
from libs.canonical_json import sha256_hex, strict_loads
from libs.events.codec import envelope_bytes
from libs.signing.dsse import SignatureError, decode_payload, verify_envelope
from libs.signing.keys import KeyRegistry


@dataclass(frozen=True)
class AttestationCheck:
    """The verdict on one attestation. `ok` only when nothing is wrong; then `claims()` says what it proves."""

    digest: str
    problems: list[str]
    signer: str | None = None
    keyid: str | None = None
    subject: list[Subject] = field(default_factory=list)
    predicate: IncidentPredicate | None = None
    statement: dict[str, Any] | None = None
    chain_verified: int = 0
    """How many envelopes of the causal chain verified offline, each signed by a key of its producer's role."""

    @property
    def ok(self) -> bool:
        return not self.problems and self.signer is not None and self.predicate is not None

    def claims(self) -> list[str]:
        """What a verified attestation proves, one sentence a line; nothing when it did not verify."""
        return describe(self) if self.ok else []


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def verify_attestation(
    envelope_bytes: bytes,
    registry: KeyRegistry,
    expected_signer: str = ATTESTER_ROLE,
    envelopes: Sequence[bytes] = (),
) -> AttestationCheck:
    """`envelopes`: chain envelopes the verifier has (from the ledger, say); each one of the chain is checked.
    The source event's envelope travels in the attestation, so the claims are checked against it in any case."""
    digest = sha256_hex(envelope_bytes)
    try:
        envelope = _envelope(envelope_bytes)
        keyid, signer = _signature(envelope, registry, expected_signer)
        statement = _statement(decode_payload(envelope))
        predicate = _predicate(statement)
    except _Refused as refused:
        return AttestationCheck(digest, [refused.reason])
    evidence = check_evidence(predicate, registry, envelopes)
    return AttestationCheck(
        digest,
        _consistency_problems(statement.subject, predicate) + evidence.problems,
        signer=signer,
        keyid=keyid,
        subject=list(statement.subject),
        predicate=predicate,
        statement=statement.document(),
        chain_verified=evidence.verified,
    )


def _envelope(raw: bytes) -> DsseEnvelope:
    try:
        document = strict_loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise _Refused(f"not JSON: {str(exc)[:120]}") from exc
    try:
        envelope = DsseEnvelope.model_validate(document)
    except ValidationError as exc:
        raise _Refused(f"not a DSSE envelope: {_summary(exc)}") from exc
    if envelope.payloadType != IN_TOTO_PAYLOAD_TYPE:
        raise _Refused(f"wrong payload type {envelope.payloadType[:100]!r}: an attestation is {IN_TOTO_PAYLOAD_TYPE}")
    _require_canonical_base64(envelope.payload, "the payload")
    for signature in envelope.signatures:
        _require_canonical_base64(signature.sig, f"the signature by {signature.keyid}")
    if envelope_bytes(envelope) != raw:
        raise _Refused("the envelope is not in canonical JSON form, so these are not the bytes that were published")
    return envelope


def _require_canonical_base64(text: str, what: str) -> None:
    """Base64 has spare bits in its last character; a changed spare bit must not pass as the same bytes."""
    try:
        canonical = base64.b64encode(base64.b64decode(text, validate=True)).decode() == text
    except (binascii.Error, ValueError):
        canonical = False
    if not canonical:
        raise _Refused(f"{what} is not valid canonical base64")


def _signature(envelope: DsseEnvelope, registry: KeyRegistry, expected_signer: str) -> tuple[str, str]:
    reasons: list[str] = []
    for signature in envelope.signatures:
        alone = envelope.model_copy(update={"signatures": [signature]})
        try:
            return signature.keyid, verify_envelope(alone, registry, expected_owner=expected_signer)
        except SignatureError as exc:
            reasons.append(str(exc))
    raise _Refused("not signed by a known " + expected_signer + " key: " + "; ".join(reasons))


def _statement(payload: bytes) -> Statement:
    try:
        document = strict_loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise _Refused(f"the signed statement is not JSON: {str(exc)[:120]}") from exc
    if not isinstance(document, dict) or document.get("_type") != STATEMENT_TYPE:
        found = document.get("_type") if isinstance(document, dict) else type(document).__name__
        raise _Refused(f"not an in-toto Statement v1 (_type is {str(found)[:80]!r}, expected {STATEMENT_TYPE})")
    try:
        statement = Statement.model_validate(document)
    except ValidationError as exc:
        raise _Refused(f"not an in-toto Statement v1: {_summary(exc)}") from exc
    if statement.predicateType != PREDICATE_TYPE:
        raise _Refused(f"unknown predicate type {statement.predicateType[:100]!r}, expected {PREDICATE_TYPE}")
    return statement


def _predicate(statement: Statement) -> IncidentPredicate:
    try:
        return IncidentPredicate.model_validate(statement.predicate)
    except ValidationError as exc:
        raise _Refused(f"the predicate is not a ModelGuard incident predicate: {_summary(exc)}") from exc


def _consistency_problems(subjects: list[Subject], predicate: IncidentPredicate) -> list[str]:
    problems: list[str] = []
    if predicate.chain[-1].digest != predicate.source.digest:
        problems.append("the causal chain does not end in the source event")
    expected = _expected_subject_digest(predicate)
    if expected is not None and expected not in {s.sha256 for s in subjects}:
        problems.append(f"no subject has the digest the predicate attests ({expected})")
    return problems


def _expected_subject_digest(predicate: IncidentPredicate) -> str | None:
    if predicate.patch is not None:
        return predicate.patch.sha256
    if predicate.diagnosis is not None:
        return predicate.diagnosis.report_sha256
    if predicate.upstream_risk is not None:
        return predicate.upstream_risk.change_fingerprint
    return None


def _summary(exc: ValidationError, limit: int = 3) -> str:
    errors = exc.errors()
    parts = [f"{'.'.join(str(p) for p in e['loc']) or '(document)'}: {e['msg']}" for e in errors[:limit]]
    more = f" (+{len(errors) - limit} more)" if len(errors) > limit else ""
    return "; ".join(parts) + more
