"""Audit: a changed byte, a forged signature, a broken link or a lost event is found, and the event named."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import pytest

from contracts.envelope import EVENT_PAYLOAD_TYPE
from libs.canonical_json import canonical_bytes, sha256_hex
from libs.events.codec import SignedEvent, envelope_bytes, event_bytes, seal
from libs.events.factory import next_event
from libs.ledger import LedgerStore, chain_hash, verify_all, verify_incident
from libs.signing.dsse import sign_envelope
from libs.signing.keys import SigningKey, generate_key
from tests.support.sample_events import SampleKeys, abstained_incident, repaired_incident, sample_incident_id
from tests.unit.ledger.conftest import Attacker

INCIDENT = sample_incident_id("audited")


@pytest.fixture
def chain(store: LedgerStore, keys: SampleKeys) -> list[SignedEvent]:
    events = repaired_incident(keys, "audited")
    for signed in [*events, *abstained_incident(keys, "bystander")]:
        store.append(signed)
    return events


def test_an_untouched_ledger_verifies(store: LedgerStore, keys: SampleKeys, chain: list[SignedEvent]) -> None:
    reports = verify_all(store, keys.registry)

    assert [(r.ok, r.events_checked) for r in reports] == [(True, 6), (True, 3)]
    assert verify_incident(store, INCIDENT, keys.registry).problems == []


@pytest.mark.parametrize("offset", [0, 5, 300, 700, -60, -3])
def test_one_flipped_byte_anywhere_in_an_envelope_names_that_event(
    store: LedgerStore, keys: SampleKeys, chain: list[SignedEvent], attacker: Attacker, offset: int
) -> None:
    (envelope,) = attacker.read("SELECT envelope FROM ledger_events WHERE position = 3")[0]
    flipped = bytearray(str(envelope).encode())
    flipped[offset] ^= 0x01
    attacker.execute("UPDATE ledger_events SET envelope = ? WHERE position = 3", flipped.decode())

    report = verify_incident(store, INCIDENT, keys.registry)

    assert not report.ok
    assert {(p.position, p.sequence, p.event_id, p.event_type) for p in report.problems} == {
        (3, 3, chain[2].event.meta.event_id, "DiagnosisCompleted")
    }
    assert any("hash is not sha256" in p.what for p in report.problems)
    assert verify_incident(store, sample_incident_id("bystander"), keys.registry).ok


def test_a_rewritten_event_with_a_recomputed_chain_is_named_by_its_signature(
    store: LedgerStore, keys: SampleKeys, chain: list[SignedEvent], attacker: Attacker
) -> None:
    """The attacker changes a number in a signed payload and rewrites every hash after it consistently."""
    forged = _with_payload(chain[1].envelope_bytes, lambda doc: doc["payload"]["gate"].update(candidate=0.95))
    attacker.execute(
        "UPDATE ledger_events SET envelope = ?, envelope_digest = ? WHERE position = 2",
        forged.decode(),
        sha256_hex(forged),
    )
    _rechain(attacker, INCIDENT)

    problems = verify_incident(store, INCIDENT, keys.registry).problems

    assert [(p.sequence, p.event_type) for p in problems] == [(2, "RegressionDetected"), (3, "DiagnosisCompleted")]
    assert "bad-signature" in problems[0].what
    assert "computed from an envelope the ledger does not hold" in problems[1].what  # digest of the original


def test_a_deleted_event_is_named_by_the_event_after_it(
    store: LedgerStore, keys: SampleKeys, chain: list[SignedEvent], attacker: Attacker
) -> None:
    attacker.execute("DELETE FROM ledger_events WHERE position = 4")

    problems = verify_incident(store, INCIDENT, keys.registry).problems

    assert {p.sequence for p in problems} == {5}
    whats = " | ".join(p.what for p in problems)
    assert "sequence 5 where 4 was expected" in whats
    assert "prev_hash does not equal" in whats
    assert f"causation_id {chain[3].event.meta.event_id} names no earlier event" in whats


def test_a_changed_column_is_named(
    store: LedgerStore, keys: SampleKeys, chain: list[SignedEvent], attacker: Attacker
) -> None:
    attacker.execute("UPDATE ledger_events SET event_type = 'EvaluationPassed' WHERE position = 2")

    (problem,) = verify_incident(store, INCIDENT, keys.registry).problems

    assert (problem.sequence, problem.event_type) == (2, "EvaluationPassed")
    assert "stored event_type 'EvaluationPassed' is not the signed event's 'RegressionDetected'" in problem.what


@pytest.mark.parametrize(
    ("signing_key", "reason"),
    [
        (lambda keys: generate_key("diagnoser"), "unknown key"),
        (lambda keys: keys.keys["diagnoser"], "belongs to diagnoser, not repairer"),
    ],
    ids=["unregistered-key", "another-producers-key"],
)
def test_a_signature_not_by_the_named_producer_is_reported(
    store: LedgerStore, keys: SampleKeys, chain: list[SignedEvent], signing_key, reason: str
) -> None:
    event = next_event(
        chain[3].event.payload,
        producer="repairer",
        producer_version="0.1.0",
        occurred_at=chain[-1].event.meta.occurred_at,
        causes=chain[-1:],
    )
    forged = _signed_by(event, signing_key(keys))
    assert store.append(forged).appended  # the store trusts its caller; the audit does not

    (problem,) = verify_incident(store, INCIDENT, keys.registry).problems

    assert (problem.sequence, problem.event_id) == (7, event.meta.event_id)
    assert "bad-signature" in problem.what
    assert reason in problem.what


def test_a_cause_in_another_incident_is_not_a_causation_link(
    store: LedgerStore, keys: SampleKeys, chain: list[SignedEvent]
) -> None:
    stray = seal(
        next_event(
            chain[2].event.payload,
            producer="diagnoser",
            producer_version="0.1.0",
            occurred_at=chain[2].event.meta.occurred_at,
            causes=[abstained_incident(keys, "bystander")[1]],
            incident_id=INCIDENT,
        ),
        keys.keys["diagnoser"],
    )
    store.append(stray)

    (problem,) = verify_incident(store, INCIDENT, keys.registry).problems

    assert problem.sequence == 7
    assert "names no earlier event of this incident" in problem.what


def test_an_event_computed_from_an_envelope_the_ledger_does_not_hold_is_reported(
    store: LedgerStore, keys: SampleKeys
) -> None:
    """The detector re-ran later: same event id, new timestamp, so a different envelope. The ledger kept the
    first; the diagnosis was computed from the second."""
    events = repaired_incident(keys, "rerun")
    rerun = seal(
        next_event(
            events[1].event.payload,
            producer="detector",
            producer_version="0.1.0",
            occurred_at=events[1].event.meta.occurred_at + timedelta(minutes=5),
            causes=events[:1],
        ),
        keys.keys["detector"],
    )
    assert rerun.event.meta.event_id == events[1].event.meta.event_id
    assert rerun.digest != events[1].digest
    diagnosis = seal(
        next_event(
            events[2].event.payload,
            producer="diagnoser",
            producer_version="0.1.0",
            occurred_at=rerun.event.meta.occurred_at,
            causes=[rerun],
        ),
        keys.keys["diagnoser"],
    )
    for signed in [*events[:2], rerun, diagnosis]:
        store.append(signed)

    (problem,) = verify_incident(store, sample_incident_id("rerun"), keys.registry).problems

    assert (problem.sequence, problem.event_id) == (3, diagnosis.event.meta.event_id)
    assert "computed from an envelope the ledger does not hold" in problem.what


def test_an_unknown_incident_does_not_verify(store: LedgerStore, keys: SampleKeys) -> None:
    report = verify_incident(store, sample_incident_id("nowhere"), keys.registry)

    assert (report.ok, report.events_checked) == (False, 0)


def _signed_by(event, key: SigningKey) -> SignedEvent:  # type: ignore[no-untyped-def]
    envelope = sign_envelope(event_bytes(event), EVENT_PAYLOAD_TYPE, key)
    return SignedEvent(event, envelope, envelope_bytes(envelope), event.meta.producer)


def _with_payload(raw: bytes, change) -> bytes:  # type: ignore[no-untyped-def]
    envelope = json.loads(raw)
    document = json.loads(base64.b64decode(envelope["payload"]))
    change(document)
    envelope["payload"] = base64.b64encode(canonical_bytes(document)).decode()
    return canonical_bytes(envelope)


def _rechain(attacker: Attacker, incident_id: str) -> None:
    rows = attacker.read(
        "SELECT position, envelope FROM ledger_events WHERE incident_id = ? ORDER BY sequence", incident_id
    )
    previous = "0" * 64
    for position, envelope in rows:
        current = chain_hash(previous, str(envelope).encode())
        attacker.execute(
            "UPDATE ledger_events SET prev_hash = ?, hash = ? WHERE position = ?", previous, current, position
        )
        previous = current
