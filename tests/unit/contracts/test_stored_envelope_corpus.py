"""The past a new reader must still read: envelopes stored by a real run of the stack (the demo's two incidents,
written by all seven services, tests/fixtures/envelope-corpus/, written by tests/support/envelope_corpus.py), and
the same events as their writers one minor older would have signed them. Every one opens with today's contracts,
the ledger they make verifies, and replay gives the incidents it gave when they were written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from libs.events.codec import SignedEvent, open_envelope
from libs.ledger import LedgerStore
from libs.ledger.projections import project
from libs.ledger.verify import verify_all
from libs.signing.keys import KeyRegistry
from tests.support.envelope_corpus import ADDED_IN, without_fields

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "envelope-corpus"


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (CORPUS / name).read_text().splitlines() if line.strip()]


def _registry() -> KeyRegistry:
    return KeyRegistry.from_document(json.loads((CORPUS / "registry.json").read_text()))


def _stored() -> list[SignedEvent]:
    registry = _registry()
    return [open_envelope(entry["envelope"].encode(), registry) for entry in _lines("envelopes.jsonl")]


def test_every_stored_envelope_opens_verifies_and_replays_as_it_did(tmp_path: Path) -> None:
    stored = _stored()
    expected = json.loads((CORPUS / "expected.json").read_text())
    assert {s.event.meta.event_type for s in stored} >= {"ContextCollected", "UpstreamRiskDetected", "Published"}
    with LedgerStore(f"sqlite:///{tmp_path / 'ledger.db'}") as store:
        store.create_schema()
        for signed in stored:
            assert store.append(signed).appended
        reports = verify_all(store, _registry())
        assert [r.incident_id for r in reports if not r.ok] == []
        replayed = project(open_envelope(row.envelope_bytes, _registry()).event for row in store.events_after(0))
    assert {
        incident: {
            "events": [s.event.meta.event_type for s in stored if s.event.meta.incident_id == incident],
            "status": p.status,
        }
        for incident, p in replayed.items()
    } == expected


def test_the_events_as_their_older_minor_writers_signed_them_open_with_the_later_fields_at_their_defaults() -> None:
    registry = _registry()
    current = {(s.event.meta.event_id): s for s in _stored()}
    older = _lines("older-minor.jsonl")
    assert older, "the corpus holds events of contracts past their first minor"
    for entry in older:
        signed = open_envelope(entry["envelope"].encode(), registry)
        assert signed.event.meta.event_version == "1.0"
        now = current[signed.event.meta.event_id]
        assert now.event.meta.event_version == entry["written_as"]
        added = ADDED_IN[entry["written_as"]]
        assert without_fields(signed.event.payload.model_dump(mode="json"), added) == without_fields(
            now.event.payload.model_dump(mode="json"), added
        )


SELF_REPORTED = CORPUS / "self-reported"


def test_evaluation_reports_as_their_1_0_writers_signed_them_open_and_verify() -> None:
    registry = KeyRegistry.from_document(json.loads((SELF_REPORTED / "registry.json").read_text()))
    entries = [json.loads(line) for line in (SELF_REPORTED / "envelopes.jsonl").read_text().splitlines() if line]
    assert {entry["claims"] for entry in entries} == {"figures", "nothing"}
    for entry in entries:
        signed = open_envelope(entry["envelope"].encode(), registry)
        assert (signed.event.meta.event_type, signed.event.meta.event_version) == ("EvaluationReported", "1.0")
