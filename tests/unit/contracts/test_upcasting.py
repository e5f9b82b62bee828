"""EvaluationReported 2.0 and its upcaster: stored 1.0 reports (the corpus, written by the 1.x code) still open,
verify against the bytes their writers signed and read as 2.0; a 1.0 report with no faithful 2.0 form is refused
with its reason; the ingestion accepts the 1.x body deployed CI actions send."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contracts.envelope import EVENT_PAYLOAD_TYPE
from contracts.events.evaluation import ClaimedMetrics, EvaluationReported
from contracts.registry import PAST_CONTRACTS, UnknownEventType, all_topics, contract_for, parse_event, topic_of
from contracts.upcasting import UpcastRefused, evaluation_reported_v1_to_v2
from libs.canonical_json import canonical_bytes
from libs.events.codec import MalformedMessage, envelope_bytes, open_envelope
from libs.ledger import LedgerStore
from libs.ledger.projections import project
from libs.ledger.verify import verify_all
from libs.signing.dsse import decode_payload, sign_envelope
from libs.signing.keys import KeyRegistry, RegisteredKey, generate_key
from services.detector.ingest_request import BadRequest, parse_evaluation

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "envelope-corpus"
SELF_REPORTED = CORPUS / "self-reported"


def _entries(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "envelopes.jsonl").read_text().splitlines() if line.strip()]


def _registry(folder: Path) -> KeyRegistry:
    return KeyRegistry.from_document(json.loads((folder / "registry.json").read_text()))


def test_stored_1_0_reports_open_verify_and_read_as_2_0() -> None:
    registry = _registry(SELF_REPORTED)
    read = {}
    for entry in _entries(SELF_REPORTED):
        raw = entry["envelope"].encode()
        signed = open_envelope(raw, registry)
        written = json.loads(decode_payload(signed.envelope))["payload"]
        assert signed.event.meta.event_version == "1.0", "the metadata stays what its writer signed"
        assert signed.envelope_bytes == raw, "nothing stored is rewritten"
        assert isinstance(signed.event.payload, EvaluationReported)
        read[entry["claims"]] = (written, signed.event.payload)
    written, figures = read["figures"]
    assert figures.claimed == ClaimedMetrics(
        baseline=written["baseline_metrics"], candidate=written["candidate_metrics"]
    )
    assert figures.workspace.model_dump(mode="json") == written["workspace"]
    written, nothing = read["nothing"]
    assert (written["baseline_metrics"], written["candidate_metrics"], nothing.claimed) == ({}, {}, None)


def test_a_ledger_of_1_0_and_2_0_reports_verifies_and_replays(tmp_path: Path) -> None:
    demo = [json.loads(e["envelope"]) for e in _entries(CORPUS)]
    demo_registry, self_registry = _registry(CORPUS), _registry(SELF_REPORTED)
    keys = [*demo_registry.to_document()["keys"], *self_registry.to_document()["keys"]]  # type: ignore[misc]
    registry = KeyRegistry.from_document({"keys": keys})
    raws = [canonical_bytes(e) for e in demo] + [e["envelope"].encode() for e in _entries(SELF_REPORTED)]
    with LedgerStore(f"sqlite:///{tmp_path / 'ledger.db'}") as store:
        store.create_schema()
        for raw in raws:
            assert store.append(open_envelope(raw, registry)).appended
        assert [r.incident_id for r in verify_all(store, registry) if not r.ok] == []
        replayed = project(open_envelope(row.envelope_bytes, registry).event for row in store.events_after(0))
    reported = [p for p in replayed.values() if p.last_event_type == "EvaluationReported"]
    assert sum(p.event_count for p in reported) == 2, "the two 1.0 reports (one tiny incident) replay"


def _document(version: str, payload: dict[str, Any], producer: str = "reporter") -> dict[str, Any]:
    meta = {
        "event_id": "0" * 31 + "1",
        "event_type": "EvaluationReported",
        "event_version": version,
        "incident_id": "inc-" + "a" * 16,
        "producer": producer,
        "producer_version": "0.1.0",
        "causation_id": None,
        "input_digests": [],
        "ancestry": [],
        "occurred_at": "2026-01-01T00:00:00Z",
    }
    return {"meta": meta, "payload": payload}


def _signed_1_0(payload: dict[str, Any]) -> tuple[bytes, KeyRegistry]:
    key = generate_key("reporter")
    raw = envelope_bytes(sign_envelope(canonical_bytes(_document("1.0", payload)), EVENT_PAYLOAD_TYPE, key))
    return raw, KeyRegistry([RegisteredKey(key.keyid, "reporter", key.private_key.public_key())])


def _v1_payload(stored: dict[str, Any], **figures: dict[str, float]) -> dict[str, Any]:
    return {**stored, **figures}


def _stored_v1_payload() -> dict[str, Any]:
    raw = _entries(SELF_REPORTED)[0]["envelope"].encode()
    payload: dict[str, Any] = json.loads(decode_payload(open_envelope(raw, _registry(SELF_REPORTED)).envelope))[
        "payload"
    ]
    return payload


def test_a_1_0_report_claiming_one_revisions_figures_is_refused_with_its_reason() -> None:
    stored = _stored_v1_payload()
    half = _v1_payload(stored, baseline_metrics={"accuracy": 0.9}, candidate_metrics={})
    with pytest.raises(UpcastRefused, match="one revision only"):
        evaluation_reported_v1_to_v2(half)
    raw, registry = _signed_1_0(half)
    with pytest.raises(MalformedMessage) as refused:
        open_envelope(raw, registry)
    assert refused.value.reason == "upcast-refused"


def test_a_1_0_payload_is_checked_against_the_bytes_its_writer_signed_before_it_is_upcast() -> None:
    stored = _stored_v1_payload()
    raw, registry = _signed_1_0(_v1_payload(stored, claimed=None))  # type: ignore[arg-type]
    with pytest.raises(MalformedMessage) as refused:  # a 2.0 field under a 1.0 version: not what 1.0 allowed
        open_envelope(raw, registry)
    assert refused.value.reason == "schema-violation"


def test_a_2_0_report_is_written_to_the_2_topic_and_both_topics_are_read() -> None:
    contract = contract_for("EvaluationReported")
    assert (contract.version, contract.topic) == ("2.0", topic_of("EvaluationReported", 2))
    assert contract.topics == (topic_of("EvaluationReported", 2), topic_of("EvaluationReported", 1))
    assert set(contract.topics) <= set(all_topics())
    assert PAST_CONTRACTS[("EvaluationReported", 1)].version == "1.0"
    with pytest.raises(UnknownEventType, match="no contract"):
        parse_event(_document("3.0", {}))


def test_the_ingestion_reads_a_1_x_body_as_2_0_and_refuses_half_a_claim() -> None:
    stored = _stored_v1_payload()
    evaluation = parse_evaluation(json.dumps(stored).encode())
    assert evaluation.claimed == ClaimedMetrics(
        baseline=stored["baseline_metrics"], candidate=stored["candidate_metrics"]
    )
    half = _v1_payload(stored, candidate_metrics={})
    with pytest.raises(BadRequest, match="one revision only"):
        parse_evaluation(json.dumps(half).encode())
    v2 = {k: v for k, v in stored.items() if k not in ("baseline_metrics", "candidate_metrics")}
    assert parse_evaluation(json.dumps({**v2, "claimed": None}).encode()).claimed is None
    with pytest.raises(BadRequest, match="different metrics"):
        parse_evaluation(json.dumps({**v2, "claimed": {"baseline": {"a": 1.0}, "candidate": {"b": 1.0}}}).encode())
