"""The offline check of an attestation's evidence: the source event's envelope it carries, and whatever chain
envelopes the verifier was given. Each is opened with the public keys and must be signed by a key whose
registered role produces that event type; the signed predicate must be exactly what the source event says,
so a publisher key that re-signs an attestation with other claims is refused."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from libs.attestation.predicate import IncidentPredicate
from libs.attestation.predicate_of import predicate_of
from libs.attestation.publishable import NotAttestable
from libs.attestation.roles import role_problem
from libs.canonical_json import sha256_hex
from libs.events.codec import MalformedMessage, SignedEvent, open_envelope
from libs.signing.keys import KeyRegistry

NOT_DERIVED = frozenset({"builder", "source_envelope"})
"""Claims about the attester itself, and the evidence (checked by its digest), not read off the source event."""


@dataclass(frozen=True)
class Evidence:
    problems: list[str] = field(default_factory=list)
    verified: int = 0
    """How many of the chain's envelopes verified offline (the source's included)."""


def check_evidence(predicate: IncidentPredicate, registry: KeyRegistry, envelopes: Sequence[bytes] = ()) -> Evidence:
    given = {sha256_hex(raw): raw for raw in envelopes}
    if predicate.source_envelope is not None:
        given.setdefault(sha256_hex(predicate.source_envelope.encode()), predicate.source_envelope.encode())
    source_raw = given.get(predicate.source.digest)
    if source_raw is None:
        return Evidence(
            [
                "the source event's envelope is neither in the attestation nor given, so its claims rest on the "
                f"{predicate.source.producer} event nobody can check offline; refused"
            ]
        )
    problems: list[str] = []
    embedded = predicate.source_envelope
    if embedded is not None and sha256_hex(embedded.encode()) != predicate.source.digest:
        problems.append("the envelope the attestation carries is not the source event's (its sha256 differs)")
    verified = 0
    for index, link in enumerate(predicate.chain, start=1):
        raw = given.get(link.digest)
        if raw is None:
            if envelopes:
                problems.append(f"chain event {index} (sha256 {link.digest[:16]}..) is not among the given envelopes")
            continue
        where = f"chain event {index}" + (f" ({link.event_type})" if link.event_type else "")
        signed, found = _open(raw, registry, where)
        problems += found
        if signed is None:
            continue
        meta = signed.event.meta
        if meta.incident_id != predicate.incident_id:
            problems.append(f"{where} belongs to incident {meta.incident_id}, not {predicate.incident_id}")
        if link.event_id is not None and link.event_id != meta.event_id:
            problems.append(f"{where} is attested as event {link.event_id} but is {meta.event_id}")
        if link.event_type is not None and link.event_type != meta.event_type:
            problems.append(f"{where} is attested as a {link.event_type} but is a {meta.event_type}")
        if link.digest == predicate.source.digest:
            problems += _derivation_problems(predicate, signed)
        if not found:
            verified += 1
    return Evidence(problems, verified)


def _open(raw: bytes, registry: KeyRegistry, where: str) -> tuple[SignedEvent | None, list[str]]:
    try:
        signed = open_envelope(raw, registry)
    except MalformedMessage as exc:
        return None, [f"{where} does not verify offline ({exc.reason}): {exc.detail[:200]}"]
    problem = role_problem(signed.event.meta.event_type, signed.signer)
    return signed, [f"{where}: {problem}"] if problem else []


def _derivation_problems(predicate: IncidentPredicate, source: SignedEvent) -> list[str]:
    try:
        derived = predicate_of(source)
    except NotAttestable as exc:
        return [f"the source event is not one a publication is made from: {exc}"]
    signed_claims = predicate.model_dump(mode="json")
    derived_claims = derived.model_dump(mode="json")
    claims = (signed_claims.keys() | derived_claims.keys()) - NOT_DERIVED
    differ = sorted(k for k in claims if signed_claims.get(k) != derived_claims.get(k))
    if not differ:
        return []
    return [
        f"the signed claim(s) {', '.join(differ)} are not what the source {source.event.meta.event_type} signed by "
        f"{source.signer} says: the attestation was re-signed with other claims"
    ]
