"""Building an attestation: an in-toto Statement v1 about the patch (or report, or upstream change), signed."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime

import pytest

from contracts.events.context import AffectedModel, UpstreamRiskDetected
from contracts.events.repair import RepairWithheld
from libs.attestation import (
    IN_TOTO_PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    NotAttestable,
    attest_publication,
)
from libs.canonical_json import canonical_bytes, sha256_hex
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from tests.support.sample_events import SampleKeys


def test_the_same_source_gives_byte_identical_envelopes(keys: SampleKeys, validated: SignedEvent) -> None:
    first = attest_publication(validated, keys.keys["publisher"])
    again = attest_publication(validated, keys.keys["publisher"])
    assert first.envelope_bytes == again.envelope_bytes
    assert first.digest == again.digest == hashlib.sha256(first.envelope_bytes).hexdigest()


def test_the_envelope_is_canonical_dsse_around_the_statement(keys: SampleKeys, validated: SignedEvent) -> None:
    attestation = attest_publication(validated, keys.keys["publisher"])
    envelope = json.loads(attestation.envelope_bytes)
    assert canonical_bytes(envelope) == attestation.envelope_bytes
    assert envelope["payloadType"] == IN_TOTO_PAYLOAD_TYPE
    assert [s["keyid"] for s in envelope["signatures"]] == [keys.keys["publisher"].keyid]
    assert json.loads(base64.b64decode(envelope["payload"])) == attestation.statement
    assert attestation.statement["_type"] == STATEMENT_TYPE
    assert attestation.statement["predicateType"] == PREDICATE_TYPE


def test_a_validated_repair_attests_the_patch_by_its_artifact_digest(keys: SampleKeys, validated: SignedEvent) -> None:
    patch = validated.event.payload.patch
    statement = attest_publication(validated, keys.keys["publisher"]).statement
    assert statement["subject"] == [{"name": ",".join(patch.files), "digest": {"sha256": patch.artifact.sha256}}]


def test_the_predicate_names_the_whole_causal_chain_policy_revisions_and_checks(
    keys: SampleKeys, incident: list[SignedEvent], validated: SignedEvent
) -> None:
    predicate = attest_publication(validated, keys.keys["publisher"]).statement["predicate"]
    meta, payload = validated.event.meta, validated.event.payload
    assert [link["digest"] for link in predicate["chain"]] == [e.digest for e in incident[:-1]]
    assert predicate["chain"][-1] == {
        "digest": validated.digest,
        "event_id": meta.event_id,
        "event_type": meta.event_type,
    }
    assert predicate["chain"][-2]["event_id"] == meta.causation_id == incident[-3].event.meta.event_id
    assert predicate["incident_id"] == meta.incident_id and predicate["outcome"] == "repair_validated"
    assert predicate["policy"] == {"name": payload.policy.name, "sha256": payload.policy.artifact.sha256}
    revisions = predicate["revisions"]
    assert (revisions["base_commit"], revisions["candidate_commit"]) == (
        payload.workspace.base_commit,
        payload.workspace.candidate_commit,
    )
    assert revisions["data_sha256"] == payload.workspace.data.sha256
    assert revisions["candidate_snapshot_sha256"] == payload.workspace.candidate_snapshot.sha256
    validation = predicate["validation"]
    assert validation["metric_after_repair"] == payload.validation.metric_after_repair
    assert validation["tests_passed"] == payload.validation.tests_passed and validation["passed"] is True
    assert [c["name"] for c in validation["checks"]] == [c.name for c in payload.validation.checks]
    diagnosis = predicate["diagnosis"]
    assert (diagnosis["hypothesis"], diagnosis["confidence"]) == (payload.hypothesis, payload.confidence)
    assert diagnosis["invalid_values"] == payload.diagnosis.invalid_values
    assert predicate["builder"]["name"] == "modelguard"


def _follow_up(keys: SampleKeys, cause: SignedEvent, payload: object, producer: str) -> SignedEvent:
    event = next_event(
        payload,  # type: ignore[arg-type]
        producer=producer,
        producer_version="test",
        occurred_at=datetime(2025, 1, 2, tzinfo=UTC),
        causes=[cause],
    )
    return seal(event, keys.keys[producer])


def test_without_a_patch_the_subject_is_the_diagnosis_report(keys: SampleKeys, incident: list[SignedEvent]) -> None:
    diagnosed = incident[2].event.payload
    withheld = RepairWithheld(
        run_id=diagnosed.run_id,
        workspace=diagnosed.workspace,
        policy=diagnosed.policy,
        gate=diagnosed.gate,
        diagnosis=diagnosed.report,
        hypothesis=diagnosed.hypothesis,
        reason="the patch guard refused it",
        violations=["touches tests/"],
    )
    source = _follow_up(keys, incident[2], withheld, "repairer")
    statement = attest_publication(source, keys.keys["publisher"]).statement
    report_digest = sha256_hex(canonical_bytes(diagnosed.report.model_dump(mode="json")))
    assert statement["subject"][0]["digest"] == {"sha256": report_digest}
    assert statement["predicate"]["outcome"] == "repair_withheld"
    assert statement["predicate"]["reason"] == "the patch guard refused it"
    assert statement["predicate"]["violations"] == ["touches tests/"]
    assert statement["predicate"]["patch"] is None and statement["predicate"]["validation"] is None


def test_an_upstream_risk_attests_the_change_fingerprint(keys: SampleKeys, incident: list[SignedEvent]) -> None:
    fingerprint = sha256_hex(b"schema change")
    risk = UpstreamRiskDetected(
        cause="schema_change",
        asset_urn="urn:li:dataset:(urn:li:dataPlatform:hive,customers,PROD)",
        change_summary="column monthly_spend dropped",
        change_fingerprint=fingerprint,
        affected=[AffectedModel(model_urn="urn:li:mlModel:m", deployments=[], owners=[], path=[])],
    )
    source = _follow_up(keys, incident[0], risk, "context")
    statement = attest_publication(source, keys.keys["publisher"]).statement
    assert statement["subject"] == [{"name": risk.asset_urn, "digest": {"sha256": fingerprint}}]
    predicate = statement["predicate"]
    assert predicate["outcome"] == "upstream_risk" and predicate["upstream_risk"]["affected_models"] == [
        "urn:li:mlModel:m"
    ]
    assert predicate["revisions"] is None and predicate["policy"] is None


def test_an_event_no_publication_is_made_from_is_refused(keys: SampleKeys, incident: list[SignedEvent]) -> None:
    with pytest.raises(NotAttestable, match="RegressionDetected"):
        attest_publication(incident[1], keys.keys["publisher"])
