"""Signed checkpoints pin the whole ledger: what no per-incident chain shows (a lost tail) they reveal."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from libs.ledger import CHECKPOINT_PAYLOAD_TYPE, LedgerStore, verify_checkpoints, verify_incident, write_checkpoint
from libs.signing.keys import KeyRegistry, RegisteredKey, generate_key
from tests.support.sample_events import SampleKeys, abstained_incident, repaired_incident, sample_incident_id
from tests.unit.ledger.conftest import Attacker

LEDGER_KEY = generate_key("ledger")


@pytest.fixture
def registry(keys: SampleKeys) -> KeyRegistry:
    owned = {**keys.keys, "ledger": LEDGER_KEY}
    return KeyRegistry([RegisteredKey(k.keyid, o, k.private_key.public_key()) for o, k in owned.items()])


@pytest.fixture
def checkpointed(store: LedgerStore, keys: SampleKeys) -> LedgerStore:
    repaired, abstained = repaired_incident(keys, "cp-a"), abstained_incident(keys, "cp-b")
    for signed in repaired[:4]:
        store.append(signed)
    write_checkpoint(store, LEDGER_KEY)
    for signed in [*repaired[4:], *abstained]:
        store.append(signed)
    write_checkpoint(store, LEDGER_KEY)
    return store


def test_checkpoints_sign_position_and_head_and_verify(checkpointed: LedgerStore, registry: KeyRegistry) -> None:
    first, second = checkpointed.checkpoints()

    assert (first.position, first.event_count, second.position, second.event_count) == (4, 4, 9, 9)
    assert CHECKPOINT_PAYLOAD_TYPE in second.envelope
    assert first.head_hash != second.head_hash
    assert verify_checkpoints(checkpointed, registry).ok


def test_no_new_event_means_no_new_checkpoint(checkpointed: LedgerStore) -> None:
    again = write_checkpoint(checkpointed, LEDGER_KEY, now=datetime(2030, 1, 1, tzinfo=UTC))

    assert again == checkpointed.checkpoints()[-1]
    assert len(checkpointed.checkpoints()) == 2


def test_a_lost_incident_tail_passes_the_chain_but_not_the_checkpoint(
    checkpointed: LedgerStore, registry: KeyRegistry, attacker: Attacker
) -> None:
    attacker.execute("DELETE FROM ledger_events WHERE position = 9")  # the abstention: the incident's last event

    assert verify_incident(checkpointed, sample_incident_id("cp-b"), registry).ok
    result = verify_checkpoints(checkpointed, registry)
    assert [p.position for p in result.problems] == [9, 9]
    assert "events after position 8 missing" in result.problems[0].what
    named = [p for p in result.problems if p.incident_id is not None]
    assert [(p.incident_id, p.what) for p in named] == [
        (sample_incident_id("cp-b"), "event 3 at position 9 is missing (checkpoint 9 lists it)")
    ]


def test_a_rewritten_head_hash_or_a_checkpoint_by_another_key_is_reported(
    checkpointed: LedgerStore, registry: KeyRegistry, keys: SampleKeys, attacker: Attacker
) -> None:
    attacker.execute("UPDATE ledger_checkpoints SET head_hash = ? WHERE position = 4", "f" * 64)
    checkpointed.append(repaired_incident(keys, "cp-c")[0])
    write_checkpoint(checkpointed, keys.keys["detector"])

    problems = verify_checkpoints(checkpointed, registry).problems

    assert {p.position for p in problems} == {4, 10}
    assert any("head_hash" in p.what and p.position == 4 for p in problems)
    assert any("belongs to detector, not ledger" in p.what for p in problems)
