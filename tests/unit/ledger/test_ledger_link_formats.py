"""A ledger written before the chain hashed the envelope's digest (`chain_links`): its rows keep verifying, a ledger
upgraded in place verifies across the change, and a chain that goes back to the old format is named."""

from __future__ import annotations

import hashlib
from collections.abc import Collection

from libs.ledger import LedgerStore, verify_all, verify_incident
from tests.support.sample_events import SampleKeys, abstained_incident, repaired_incident, sample_incident_id
from tests.unit.ledger.conftest import Attacker

INCIDENT = sample_incident_id("upgraded")


def _first_format(previous: str, envelope: str) -> str:
    """The link rows appended before 2026-12-05 hold: sha256(prev_hash || envelope), written out here, not imported."""
    return hashlib.sha256(bytes.fromhex(previous) + envelope.encode()).hexdigest()


def _rewrite_in_first_format(attacker: Attacker, incident_id: str, sequences: Collection[int]) -> None:
    """The incident's rows whose sequence is in ``sequences`` as the old appender wrote them; the others keep the
    links the current appender writes, re-pointed at the new previous hashes (an upgrade in place leaves rows
    1..k old and the rest current)."""
    rows = attacker.read(
        "SELECT position, sequence, envelope FROM ledger_events WHERE incident_id = ? ORDER BY sequence", incident_id
    )
    previous = "0" * 64
    for position, sequence, envelope in rows:
        if int(str(sequence)) in sequences:
            current = _first_format(previous, str(envelope))
        else:
            digest = hashlib.sha256(str(envelope).encode()).digest()
            current = hashlib.sha256(bytes.fromhex(previous) + digest).hexdigest()
        attacker.execute(
            "UPDATE ledger_events SET prev_hash = ?, hash = ? WHERE position = ?", previous, current, position
        )
        previous = current


def test_the_appender_links_over_the_envelopes_digest(store: LedgerStore, keys: SampleKeys) -> None:
    events = repaired_incident(keys, "upgraded")
    results = [store.append(e) for e in events]

    previous = "0" * 64
    for signed, result in zip(events, results, strict=True):
        digest = hashlib.sha256(signed.envelope_bytes).digest()
        assert result.hash == hashlib.sha256(bytes.fromhex(previous) + digest).hexdigest()
        assert result.hash != _first_format(previous, signed.envelope_bytes.decode())
        previous = result.hash


def test_a_ledger_written_in_the_first_format_verifies(
    store: LedgerStore, keys: SampleKeys, attacker: Attacker
) -> None:
    for signed in [*repaired_incident(keys, "upgraded"), *abstained_incident(keys, "bystander")]:
        store.append(signed)
    _rewrite_in_first_format(attacker, INCIDENT, sequences=range(1, 7))
    _rewrite_in_first_format(attacker, sample_incident_id("bystander"), sequences=range(1, 4))

    assert [(r.ok, r.events_checked) for r in verify_all(store, keys.registry)] == [(True, 6), (True, 3)]


def test_an_incident_upgraded_in_place_verifies_across_the_change(
    store: LedgerStore, keys: SampleKeys, attacker: Attacker
) -> None:
    for signed in repaired_incident(keys, "upgraded"):
        store.append(signed)
    _rewrite_in_first_format(attacker, INCIDENT, sequences=range(1, 4))

    report = verify_incident(store, INCIDENT, keys.registry)

    assert (report.ok, report.events_checked) == (True, 6)


def test_a_first_format_link_after_a_current_one_is_named(
    store: LedgerStore, keys: SampleKeys, attacker: Attacker
) -> None:
    for signed in repaired_incident(keys, "upgraded"):
        store.append(signed)
    _rewrite_in_first_format(attacker, INCIDENT, sequences={1, 2, 3, 5, 6})  # back to the old format after 4

    report = verify_incident(store, INCIDENT, keys.registry)

    assert sorted({p.sequence for p in report.problems}) == [5, 6]
    assert all("never goes back" in p.what for p in report.problems)


def test_a_changed_envelope_under_a_first_format_link_is_named(
    store: LedgerStore, keys: SampleKeys, attacker: Attacker
) -> None:
    for signed in repaired_incident(keys, "upgraded"):
        store.append(signed)
    _rewrite_in_first_format(attacker, INCIDENT, sequences=range(1, 7))
    (envelope,) = attacker.read("SELECT envelope FROM ledger_events WHERE incident_id = ? AND sequence = 2", INCIDENT)[
        0
    ]
    flipped = bytearray(str(envelope).encode())
    flipped[-40] ^= 0x01
    attacker.execute(
        "UPDATE ledger_events SET envelope = ? WHERE incident_id = ? AND sequence = 2", flipped.decode(), INCIDENT
    )

    report = verify_incident(store, INCIDENT, keys.registry)

    assert {p.sequence for p in report.problems} == {2}
    assert any("hash is not sha256" in p.what for p in report.problems)
