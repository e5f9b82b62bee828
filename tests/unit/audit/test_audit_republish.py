"""Republish picks the last logged event of every incident that has not reached a terminal event."""

from __future__ import annotations

from datetime import timedelta

from libs.ledger import LedgerStore
from modelguard.audit_republish import resend_lines, unfinished_last_events
from tests.support.sample_events import START, SampleKeys, abstained_incident, passed_incident, repaired_incident


def test_only_unfinished_incidents_are_picked_with_their_last_event(store: LedgerStore, keys: SampleKeys) -> None:
    finished = repaired_incident(keys, "finished")
    stuck = repaired_incident(keys, "stuck", start=START + timedelta(minutes=1))[:-2]  # lost after RepairProposed
    abstained = abstained_incident(keys, "abstained", start=START + timedelta(minutes=2))
    for event in [*finished, *stuck, *abstained, *passed_incident(keys, "passed")]:
        store.append(event)

    resends = unfinished_last_events(store, keys.registry)
    assert [r.signed.event.meta.event_id for r in resends] == [
        stuck[-1].event.meta.event_id,
        abstained[-1].event.meta.event_id,
    ]
    assert [r.topic for r in resends] == ["modelguard.repair-proposed.v1", "modelguard.diagnosis-abstained.v1"]
    assert resends[0].signed.envelope_bytes == stuck[-1].envelope_bytes, "re-sent byte for byte"

    only = unfinished_last_events(store, keys.registry, abstained[0].event.meta.incident_id)
    assert [r.signed.event.meta.event_type for r in only] == ["DiagnosisAbstained"]


def test_nothing_unfinished_is_said_plainly() -> None:
    assert resend_lines([], sent=True) == ["no unfinished incident: nothing to re-send"]


def test_an_incident_that_starts_while_republish_reads_the_ledger_does_not_break_it(
    store: LedgerStore, keys: SampleKeys
) -> None:
    """The services keep appending while republish runs: a new incident's first event can land between its reads
    (the broker-restart e2e met it in CI as a KeyError)."""
    stuck = repaired_incident(keys, "stuck-while-reading")[:-2]
    arriving = repaired_incident(keys, "arriving-meanwhile", start=START + timedelta(minutes=5))[:1]
    for event in stuck:
        store.append(event)
    heads = store.incidents

    def incidents_as_one_more_arrives() -> list:  # the append lands just before the heads are read
        if store.count() == len(stuck):
            store.append(arriving[0])
        return heads()

    store.incidents = incidents_as_one_more_arrives  # type: ignore[method-assign]
    resends = unfinished_last_events(store, keys.registry)
    assert [r.signed.event.meta.incident_id for r in resends] == [
        stuck[0].event.meta.incident_id,
        arriving[0].event.meta.incident_id,
    ]
