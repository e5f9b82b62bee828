"""The tamper suite: a real ledger of four incidents, built through the ledger service's sink, then one kind
of tampering at a time. Every one is found, and every finding that can name its incident does."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from itertools import zip_longest
from pathlib import Path
from typing import Any

import pytest

from contracts.envelope import DsseEnvelope
from libs.canonical_json import canonical_bytes
from libs.events.codec import SignedEvent
from libs.ledger import CHECKPOINT_PAYLOAD_TYPE, LedgerStore, verify_incident
from libs.ledger.audit import LedgerAudit, audit_ledger
from libs.ledger.external_head import HeadFile, HeadLog, to_document
from libs.ledger.sealing import seal_checkpoint
from libs.signing.dsse import decode_payload, sign_envelope
from services.ledger.handler import LedgerSink
from tests.support.sample_events import (
    PRODUCERS,
    SampleKeys,
    abstained_incident,
    passed_incident,
    repaired_incident,
    sample_incident_id,
)
from tests.unit.ledger.conftest import Attacker

INCIDENTS = ("tamper-a", "tamper-b", "tamper-c", "tamper-d")


@pytest.fixture(scope="module")
def ledger_keys() -> SampleKeys:
    return SampleKeys.generate([*PRODUCERS, "ledger"])


@dataclass
class Built:
    store: LedgerStore
    keys: SampleKeys
    sink: LedgerSink
    head_file: HeadFile
    head_log: HeadLog
    attacker: Attacker
    events: dict[str, list[SignedEvent]]

    def audit(self) -> LedgerAudit:
        return audit_ledger(self.store, self.keys.registry, [self.head_file, self.head_log])

    def position_of(self, incident: str, sequence: int) -> int:
        (found,) = self.attacker.read(
            "SELECT position FROM ledger_events WHERE incident_id = ? AND sequence = ?",
            sample_incident_id(incident),
            sequence,
        )
        return int(str(found[0]))

    def envelope_at(self, position: int) -> dict[str, Any]:
        (row,) = self.attacker.read("SELECT envelope FROM ledger_events WHERE position = ?", position)
        return dict(json.loads(str(row[0])))

    def overwrite_envelope(self, position: int, envelope: dict[str, Any]) -> None:
        """The attacker writes `envelope` over the stored one, guard dropped."""
        self.attacker.execute(
            "UPDATE ledger_events SET envelope = ? WHERE position = ?",
            json.dumps(envelope, separators=(",", ":")),
            position,
        )

    def later(self, seconds: float) -> None:
        """The sink's wall clock moves past the newest event by `seconds`."""
        newest = self.store.oldest_appended_after(self.store.head_position() - 1) or datetime.now(UTC)
        self.sink.wall_clock = lambda: newest + timedelta(seconds=seconds)


def _interleaved(keys: SampleKeys) -> dict[str, list[SignedEvent]]:
    a, b, c, d = INCIDENTS
    return {
        a: repaired_incident(keys, a),
        b: abstained_incident(keys, b),
        c: repaired_incident(keys, c),
        d: passed_incident(keys, d),
    }


@pytest.fixture
def built(store: LedgerStore, ledger_keys: SampleKeys, attacker: Attacker, tmp_path: Path) -> Built:
    head_file, head_log = HeadFile(tmp_path / "home" / "ledger-head.json"), HeadLog(tmp_path / "worm" / "heads.jsonl")
    key = ledger_keys.keys["ledger"]
    sink = LedgerSink(
        store,
        checkpoint=lambda: seal_checkpoint(store, key, [head_file, head_log]),
        checkpoint_every=5,
        checkpoint_interval_s=60.0,
        clock=lambda: 0.0,
    )
    events = _interleaved(ledger_keys)
    for row in zip_longest(*events.values()):
        for signed in row:
            if signed is not None:
                assert sink(signed).appended
    ledger = Built(store, ledger_keys, sink, head_file, head_log, attacker, events)
    ledger.later(120)
    assert sink.tick()  # the idle ledger's newest events get their checkpoint
    assert ledger.audit().ok, ledger.audit().findings
    return ledger


def _names(audit: LedgerAudit, incident: str) -> list[str]:
    return [f for f in audit.findings if sample_incident_id(incident) in f]


def _flip(text: str, index: int) -> str:
    return text[:index] + ("A" if text[index] != "A" else "B") + text[index + 1 :]


def test_the_built_ledger_is_checkpointed_to_its_head_inside_and_outside_the_database(built: Built) -> None:
    head = built.store.head_position()
    assert head == 17
    assert [c.position for c in built.store.checkpoints()] == [1, 5, 10, 15, 17]
    assert [h.position for h in built.head_file.heads()] == [17]
    assert [h.position for h in built.head_log.heads()] == [1, 5, 10, 15, 17]


def test_a_flipped_payload_byte_is_found_and_named(built: Built) -> None:
    position = built.position_of("tamper-c", 3)
    envelope = built.envelope_at(position)
    payload = bytearray(base64.b64decode(envelope["payload"]))
    payload[40] ^= 0x01
    envelope["payload"] = base64.b64encode(bytes(payload)).decode()
    built.overwrite_envelope(position, envelope)

    audit = built.audit()

    assert not audit.ok
    assert any(f"position {position}" in f and "hash is not sha256" in f for f in _names(audit, "tamper-c"))
    assert _names(audit, "tamper-a") == []


def test_a_flipped_signature_byte_is_found_and_named(built: Built) -> None:
    position = built.position_of("tamper-b", 2)
    envelope = built.envelope_at(position)
    envelope["signatures"][0]["sig"] = _flip(envelope["signatures"][0]["sig"], 10)
    built.overwrite_envelope(position, envelope)

    named = _names(built.audit(), "tamper-b")

    assert any(f"position {position}" in f and "envelope rejected" in f for f in named), named
    # each problem says which check found it: the console shows signature and hash chain apart
    report = verify_incident(built.store, sample_incident_id("tamper-b"), built.keys.registry)
    assert {p.check for p in report.problems if p.position == position} == {"signature", "chain"}


def test_a_deleted_middle_event_is_found_and_named(built: Built) -> None:
    position = built.position_of("tamper-a", 3)
    built.attacker.execute("DELETE FROM ledger_events WHERE position = ?", position)

    named = _names(built.audit(), "tamper-a")

    assert any("sequence 4 where 3 was expected" in f for f in named), named
    assert any(f"event 3 at position {position} is missing" in f for f in named), named


def test_a_deleted_last_event_of_an_incident_is_found_and_named(built: Built) -> None:
    position = built.position_of("tamper-d", 2)
    assert position < built.store.head_position()  # not the ledger's tail: only the incident's
    built.attacker.execute("DELETE FROM ledger_events WHERE position = ?", position)

    audit = built.audit()

    assert not audit.ok
    assert any(f"event 2 at position {position} is missing" in f for f in _names(audit, "tamper-d")), audit.findings


def test_a_deleted_tail_and_its_checkpoint_are_found_by_the_external_head_and_named(built: Built) -> None:
    built.attacker.execute("DELETE FROM ledger_events WHERE position > 15")
    built.attacker.execute("DELETE FROM ledger_checkpoints WHERE position > 15")
    # the database now ends exactly at its last checkpoint, as if events 16 and 17 had never come
    assert built.store.head_position() == 15 and built.store.latest_checkpoint().position == 15  # type: ignore[union-attr]

    audit = built.audit()

    assert not audit.ok
    assert any("events after position 15 missing, checkpoint 17" in f for f in audit.findings), audit.findings
    for incident, events in built.events.items():
        if len(events) >= 5:  # the two repaired incidents own positions 16 and 17
            assert any("is missing" in f for f in _names(audit, incident)), (incident, audit.findings)


def test_two_swapped_positions_are_found_and_both_incidents_named(built: Built) -> None:
    first, second = built.position_of("tamper-a", 2), built.position_of("tamper-c", 2)
    built.attacker.execute("UPDATE ledger_events SET position = -1 WHERE position = ?", first)
    built.attacker.execute("UPDATE ledger_events SET position = ? WHERE position = ?", first, second)
    built.attacker.execute("UPDATE ledger_events SET position = ? WHERE position = -1", second)

    audit = built.audit()

    assert any(f"position {first} held its event 2" in f and "moved" in f for f in _names(audit, "tamper-a"))
    assert any(f"position {second} held its event 2" in f and "moved" in f for f in _names(audit, "tamper-c"))


def test_two_swapped_events_of_one_incident_are_named_by_its_own_chain(built: Built) -> None:
    first, second = built.position_of("tamper-a", 4), built.position_of("tamper-a", 5)
    built.attacker.execute("UPDATE ledger_events SET position = -1 WHERE position = ?", first)
    built.attacker.execute("UPDATE ledger_events SET position = ? WHERE position = ?", first, second)
    built.attacker.execute("UPDATE ledger_events SET position = ? WHERE position = -1", second)

    named = _names(built.audit(), "tamper-a")

    assert any("positions were reordered" in f for f in named), named


def test_a_truncated_ledger_is_found_and_every_incident_named(built: Built) -> None:
    built.attacker.execute("DELETE FROM ledger_events")
    built.attacker.execute("DELETE FROM ledger_checkpoints")

    audit = built.audit()

    assert any("events after position 0 missing, checkpoint 17" in f for f in audit.findings), audit.findings
    for incident in INCIDENTS:
        assert any("is missing" in f for f in _names(audit, incident)), (incident, audit.findings)


def test_an_unreadable_external_head_refuses(built: Built) -> None:
    built.head_file.path.write_text("{not json")

    audit = built.audit()

    assert not audit.ok
    assert any("is not JSON" in f and "cannot be checked" in f for f in audit.findings), audit.findings


def test_an_external_head_signed_by_another_service_refuses(built: Built) -> None:
    latest = built.store.latest_checkpoint()
    assert latest is not None
    statement = decode_payload(DsseEnvelope.model_validate_json(latest.envelope))
    by_publisher = sign_envelope(statement, CHECKPOINT_PAYLOAD_TYPE, built.keys.keys["publisher"])
    forged = replace(
        latest,
        signer_keyid=by_publisher.signatures[0].keyid,
        envelope=canonical_bytes(by_publisher.model_dump(mode="json")).decode(),
    )
    built.head_file.path.write_text(json.dumps(to_document(forged)))

    findings = built.audit().findings

    assert any("cannot be checked" in f and "belongs to publisher, not ledger" in f for f in findings), findings


def test_the_timer_seals_only_events_older_than_the_interval(built: Built) -> None:
    more = repaired_incident(built.keys, "tamper-e")
    built.sink(more[0])
    built.sink(more[1])  # appends 18 and 19 reach neither the count nor a quiet interval
    assert built.store.latest_checkpoint().position == 17  # type: ignore[union-attr]

    built.later(30)
    assert not built.sink.tick()  # 18 and 19 are younger than the interval: no checkpoint yet
    built.later(61)
    assert built.sink.tick()

    assert built.store.latest_checkpoint().position == 19  # type: ignore[union-attr]
    assert [h.position for h in built.head_file.heads()] == [19]
    assert not built.sink.tick()  # nothing left under no checkpoint
    assert built.audit().ok


def test_a_stored_number_json_cannot_carry_is_reported_not_raised(built: Built) -> None:
    """1e999 reads as infinity, which no canonical JSON holds: the audit names the row, it does not stop."""
    for position in range(1, built.store.head_position() + 1):
        envelope = built.envelope_at(position)
        payload = base64.b64decode(envelope["payload"]).decode()
        number = re.search(r'":(\d+\.\d+)[,}]', payload)
        if number is not None:
            break
    assert number is not None, "the built ledger holds a decimal number"
    infinite = payload[: number.start(1)] + "1e999" + payload[number.end(1) :]
    envelope["payload"] = base64.b64encode(infinite.encode()).decode()
    built.overwrite_envelope(position, envelope)

    audit = built.audit()

    assert not audit.ok
    assert any(f"position {position}" in f and "bad-payload" in f for f in audit.findings), audit.findings
