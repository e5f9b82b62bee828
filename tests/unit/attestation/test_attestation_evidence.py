"""Offline, an attestation's claims are checked against the source event it carries, signed by a key of the
role that produces that event: a publisher key cannot re-sign other claims, drop the evidence, or sign the
source event itself. Given the chain's envelopes, every one of them is verified too."""

from __future__ import annotations

from typing import Any

from libs.attestation import Attestation, attest_publication, verify_attestation
from libs.canonical_json import canonical_bytes
from libs.events.codec import SignedEvent, envelope_bytes, seal
from libs.signing.dsse import sign_envelope
from libs.signing.keys import SigningKey
from tests.support.sample_events import SampleKeys

IN_TOTO = "application/vnd.in-toto+json"


def _resigned(attestation: Attestation, key: SigningKey, change: Any) -> bytes:
    statement = dict(attestation.statement)
    statement["predicate"] = change(dict(statement["predicate"]))
    return envelope_bytes(sign_envelope(canonical_bytes(statement), IN_TOTO, key))


def test_an_attestation_carries_its_source_and_verifies_offline(keys: SampleKeys, validated: SignedEvent) -> None:
    attestation = attest_publication(validated, keys.keys["publisher"])
    assert attestation.statement["predicate"]["source_envelope"] == validated.envelope_bytes.decode()

    check = verify_attestation(attestation.envelope_bytes, keys.registry)

    assert check.ok, check.problems
    assert check.chain_verified == 1
    assert any("1 of 5 chain envelope(s) verified offline" in claim for claim in check.claims())


def test_other_claims_re_signed_with_the_publisher_key_are_refused(keys: SampleKeys, validated: SignedEvent) -> None:
    attestation = attest_publication(validated, keys.keys["publisher"])

    def better_gate(predicate: dict[str, Any]) -> dict[str, Any]:
        return {**predicate, "gate": {**predicate["gate"], "candidate": 0.99, "regressed": False}}

    check = verify_attestation(_resigned(attestation, keys.keys["publisher"], better_gate), keys.registry)

    assert not check.ok and check.signer == "publisher"
    assert check.problems == [
        "the signed claim(s) gate are not what the source RepairValidated signed by validator says: "
        "the attestation was re-signed with other claims"
    ]


def test_dropping_the_source_envelope_and_re_signing_is_refused(keys: SampleKeys, validated: SignedEvent) -> None:
    attestation = attest_publication(validated, keys.keys["publisher"])

    def without_evidence(predicate: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in predicate.items() if k != "source_envelope"}

    check = verify_attestation(_resigned(attestation, keys.keys["publisher"], without_evidence), keys.registry)

    assert not check.ok
    assert len(check.problems) == 1 and "the source event's envelope is neither in the attestation" in check.problems[0]
    assert check.problems[0].endswith("refused")


def test_a_source_event_signed_by_the_publisher_itself_is_refused(keys: SampleKeys, validated: SignedEvent) -> None:
    event = validated.event.model_copy(
        update={"meta": validated.event.meta.model_copy(update={"producer": "publisher"})}
    )
    by_publisher = seal(event, keys.keys["publisher"])  # a valid signature, by the wrong role

    check = verify_attestation(attest_publication(by_publisher, keys.keys["publisher"]).envelope_bytes, keys.registry)

    assert not check.ok
    assert check.problems == [
        "chain event 5 (RepairValidated): a RepairValidated is signed by a publisher key; only validator signs one"
    ]


def test_given_the_chain_every_envelope_is_verified(
    keys: SampleKeys, incident: list[SignedEvent], validated: SignedEvent
) -> None:
    attestation = attest_publication(validated, keys.keys["publisher"])
    chain = [e.envelope_bytes for e in incident[:-1]]  # detect .. validate; the publication itself is not in it

    check = verify_attestation(attestation.envelope_bytes, keys.registry, envelopes=chain)

    assert check.ok, check.problems
    assert check.chain_verified == 5 == len(check.predicate.chain)  # type: ignore[union-attr]


def test_a_missing_or_foreign_chain_envelope_is_named(
    keys: SampleKeys, incident: list[SignedEvent], validated: SignedEvent
) -> None:
    attestation = attest_publication(validated, keys.keys["publisher"])
    missing_second = [e.envelope_bytes for i, e in enumerate(incident[:-1]) if i != 1]

    check = verify_attestation(attestation.envelope_bytes, keys.registry, envelopes=missing_second)

    assert not check.ok
    assert len(check.problems) == 1 and check.problems[0].startswith("chain event 2 (sha256 ")
    assert check.problems[0].endswith("is not among the given envelopes")
