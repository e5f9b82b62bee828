"""Verifying an attestation offline: it passes untouched, and every kind of tampering is refused with a reason."""

from __future__ import annotations

import base64
import json

import pytest

from contracts.catalogue import Hypothesis, RepairStrategy
from libs.attestation import (
    IN_TOTO_PAYLOAD_TYPE,
    Attestation,
    attest_publication,
    verify_attestation,
)
from libs.attestation.predicate import DiagnosisClaim
from libs.canonical_json import canonical_bytes
from libs.events.codec import SignedEvent, envelope_bytes
from libs.signing.dsse import sign_envelope
from libs.signing.keys import KeyRegistry, RegisteredKey, SigningKey, generate_key
from tests.support.sample_events import SampleKeys


@pytest.fixture(scope="module")
def attestation(keys: SampleKeys, validated: SignedEvent) -> Attestation:
    return attest_publication(validated, keys.keys["publisher"])


def _signed(document: object, key: SigningKey, payload_type: str = IN_TOTO_PAYLOAD_TYPE) -> bytes:
    return envelope_bytes(sign_envelope(canonical_bytes(document), payload_type, key))


def test_an_untouched_attestation_verifies(keys: SampleKeys, attestation: Attestation) -> None:
    check = verify_attestation(attestation.envelope_bytes, keys.registry)
    assert check.ok and check.problems == []
    assert check.signer == "publisher" and check.keyid == keys.keys["publisher"].keyid
    assert check.digest == attestation.digest
    assert check.statement == attestation.statement
    assert [s.sha256 for s in check.subject] == [attestation.statement["subject"][0]["digest"]["sha256"]]


def test_one_changed_byte_anywhere_in_the_envelope_fails_with_a_reason(
    keys: SampleKeys, attestation: Attestation
) -> None:
    raw = attestation.envelope_bytes
    for position in range(len(raw)):
        tampered = raw[:position] + bytes([raw[position] ^ 0x01]) + raw[position + 1 :]
        check = verify_attestation(tampered, keys.registry)
        assert not check.ok, f"a changed byte at {position} passed"
        assert len(check.problems) == 1 and check.problems[0], position
        assert check.claims() == []


def test_one_changed_byte_anywhere_in_the_signed_statement_fails(keys: SampleKeys, attestation: Attestation) -> None:
    envelope = json.loads(attestation.envelope_bytes)
    payload = base64.b64decode(envelope["payload"])
    for position in range(0, len(payload), 7):
        changed = payload[:position] + bytes([payload[position] ^ 0x01]) + payload[position + 1 :]
        tampered = canonical_bytes({**envelope, "payload": base64.b64encode(changed).decode()})
        check = verify_attestation(tampered, keys.registry)
        assert not check.ok
        assert check.problems[0].startswith("not signed by a known publisher key: bad signature by"), check.problems


def test_an_unknown_key_is_named(attestation: Attestation, validated: SignedEvent) -> None:
    stranger = generate_key("publisher")
    forged = attest_publication(validated, stranger)
    check = verify_attestation(forged.envelope_bytes, KeyRegistry([]))
    assert not check.ok and check.problems == [f"not signed by a known publisher key: unknown key {stranger.keyid}"]


def test_a_key_registered_to_another_service_is_refused(keys: SampleKeys, validated: SignedEvent) -> None:
    by_detector = attest_publication(validated, keys.keys["detector"])
    check = verify_attestation(by_detector.envelope_bytes, keys.registry)
    assert not check.ok
    assert check.problems == [
        f"not signed by a known publisher key: key {keys.keys['detector'].keyid} belongs to detector, not publisher"
    ]
    assert verify_attestation(by_detector.envelope_bytes, keys.registry, expected_signer="detector").ok


def test_a_wrong_payload_type_is_refused_even_when_signed(keys: SampleKeys, attestation: Attestation) -> None:
    raw = _signed(attestation.statement, keys.keys["publisher"], "application/vnd.modelguard.event+json")
    check = verify_attestation(raw, keys.registry)
    assert check.problems == [
        "wrong payload type 'application/vnd.modelguard.event+json': an attestation is application/vnd.in-toto+json"
    ]


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda s: {**s, "_type": "https://in-toto.io/Statement/v0.1"}, "not an in-toto Statement v1 (_type is"),
        (lambda s: {**s, "subject": []}, "not an in-toto Statement v1: subject"),
        (lambda s: {**s, "extra": 1}, "not an in-toto Statement v1: extra"),
        (lambda s: {**s, "predicateType": "https://slsa.dev/provenance/v1"}, "unknown predicate type"),
        (
            lambda s: {**s, "predicate": {"incident_id": "inc-1"}},
            "the predicate is not a ModelGuard incident predicate",
        ),
        (lambda s: [s], "not an in-toto Statement v1 (_type is 'list'"),
    ],
)
def test_a_signed_statement_that_is_not_ours_is_refused(
    keys: SampleKeys, attestation: Attestation, mutate: object, reason: str
) -> None:
    raw = _signed(mutate(attestation.statement), keys.keys["publisher"])  # type: ignore[operator]
    check = verify_attestation(raw, keys.registry)
    assert not check.ok and check.problems[0].startswith(reason), check.problems


def test_a_subject_that_is_not_what_the_predicate_attests_is_a_problem(
    keys: SampleKeys, attestation: Attestation
) -> None:
    other = {**attestation.statement, "subject": [{"name": "x.py", "digest": {"sha256": "0" * 64}}]}
    check = verify_attestation(_signed(other, keys.keys["publisher"]), keys.registry)
    assert not check.ok and check.signer == "publisher"
    assert check.problems == [
        f"no subject has the digest the predicate attests ({attestation.statement['predicate']['patch']['sha256']})"
    ]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xff\xfe not json", "not JSON"),
        (b"", "not JSON"),
        (b'{"a": NaN}', "not JSON"),
        (b"[1, 2]", "not a DSSE envelope"),
        (b'{"payloadType": "x"}', "not a DSSE envelope"),
    ],
)
def test_garbage_is_refused_with_a_reason_not_a_traceback(keys: SampleKeys, raw: bytes, reason: str) -> None:
    check = verify_attestation(raw, keys.registry)
    assert not check.ok and check.problems[0].startswith(reason)


def test_a_pretty_printed_envelope_is_not_the_published_bytes(keys: SampleKeys, attestation: Attestation) -> None:
    pretty = json.dumps(json.loads(attestation.envelope_bytes), indent=2).encode()
    check = verify_attestation(pretty, keys.registry)
    assert check.problems == [
        "the envelope is not in canonical JSON form, so these are not the bytes that were published"
    ]


def test_a_second_valid_signature_is_enough(keys: SampleKeys, attestation: Attestation) -> None:
    envelope = json.loads(attestation.envelope_bytes)
    stranger = generate_key("publisher")
    unknown = {"keyid": stranger.keyid, "sig": envelope["signatures"][0]["sig"]}
    both = canonical_bytes({**envelope, "signatures": [unknown, *envelope["signatures"]]})
    check = verify_attestation(both, keys.registry)
    assert check.ok and check.keyid == keys.keys["publisher"].keyid


def test_the_claims_say_what_is_proven(keys: SampleKeys, attestation: Attestation, validated: SignedEvent) -> None:
    payload, meta = validated.event.payload, validated.event.meta
    claims = verify_attestation(attestation.envelope_bytes, keys.registry).claims()
    text = "\n".join(claims)
    assert (
        claims[0]
        == f"signed by publisher with key {keys.keys['publisher'].keyid}; attestation sha256 {attestation.digest}"
    )
    assert f"subject {payload.patch.files[0]} sha256 {payload.patch.artifact.sha256}" in claims
    assert f"incident {meta.incident_id} run {payload.run_id}: outcome repair_validated" in claims
    assert f"causal chain of 5 signed event(s), oldest first, ending in RepairValidated {meta.event_id}" in text
    assert f"policy {payload.policy.name} sha256 {payload.policy.artifact.sha256}" in claims
    assert f"base {payload.workspace.base_commit[:12]} -> candidate {payload.workspace.candidate_commit[:12]}" in text
    assert "validation passed (1/1 checks): roc_auc after repair 0.9000; tests 12 passed, 0 failed" in text
    assert f"diagnosis {payload.hypothesis} (confidence {payload.confidence})" in text


def test_the_claims_name_the_catalogue_members_plainly(keys: SampleKeys, attestation: Attestation) -> None:
    """The claims print the hypothesis's and the strategy's names, never an enum's repr."""
    check = verify_attestation(attestation.envelope_bytes, keys.registry)
    assert check.predicate is not None and check.predicate.diagnosis is not None and check.predicate.patch is not None
    assert check.predicate.diagnosis.hypothesis == Hypothesis.FEATURE_TRANSFORMATION.value
    assert check.predicate.patch.strategy in {s.value for s in RepairStrategy}
    text = "\n".join(check.claims())
    assert "diagnosis feature_transformation (confidence " in text
    assert f"patch {check.predicate.patch.strategy} on " in text
    assert "Hypothesis." not in text and "RepairStrategy." not in text


def test_a_hypothesis_or_strategy_a_later_catalogue_added_still_reads() -> None:
    """Forward compatibility of the signed predicate: an older verifier reads names its catalogue does not hold."""
    diagnosis = DiagnosisClaim.model_validate(
        {"hypothesis": "upstream_pipeline_change", "confidence": 0.8, "report_sha256": "0" * 64, "invalid_values": {}}
    )
    assert diagnosis.hypothesis == "upstream_pipeline_change"
    assert "upstream_pipeline_change" not in {h.value for h in Hypothesis}


def test_a_registry_of_public_keys_alone_is_enough(keys: SampleKeys, attestation: Attestation) -> None:
    public_only = KeyRegistry.from_document(keys.registry.to_document())
    publisher = keys.keys["publisher"]
    assert public_only.get(publisher.keyid) == RegisteredKey(
        publisher.keyid,
        "publisher",
        public_only.get(publisher.keyid).public_key,  # type: ignore[union-attr]
    )
    assert verify_attestation(attestation.envelope_bytes, public_only).ok
