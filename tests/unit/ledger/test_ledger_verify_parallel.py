"""Verifying the whole ledger in batches and in a pool of processes finds exactly what one process checking one
incident at a time finds, in the same order, tampered rows included."""

from __future__ import annotations

import base64
import json

from libs.ledger import LedgerStore, verify_all, verify_incident
from libs.ledger.rows import IncidentHead
from libs.ledger.verify import incident_batches
from tests.support.sample_events import (
    SampleKeys,
    abstained_incident,
    passed_incident,
    repaired_incident,
    sample_incident_id,
)
from tests.unit.ledger.conftest import Attacker


def _ledger(store: LedgerStore, keys: SampleKeys) -> list[str]:
    names = [f"par-{i}" for i in range(12)]
    builders = (repaired_incident, abstained_incident, passed_incident)
    for i, name in enumerate(names):
        store.append_batch(builders[i % 3](keys, name))
    return names


def _tamper(store: LedgerStore, attacker: Attacker) -> None:
    (row,) = attacker.read(
        "SELECT position, envelope FROM ledger_events WHERE incident_id = ? AND sequence = 3",
        sample_incident_id("par-3"),
    )
    envelope = json.loads(str(row[1]))
    envelope["signatures"][0]["sig"] = base64.b64encode(b"\0" * 64).decode()
    attacker.execute("UPDATE ledger_events SET envelope = ? WHERE position = ?", json.dumps(envelope), row[0])
    attacker.execute("DELETE FROM ledger_events WHERE incident_id = ? AND sequence = 1", sample_incident_id("par-7"))
    attacker.execute(
        "UPDATE ledger_events SET producer = 'publisher' WHERE incident_id = ? AND sequence = 2",
        sample_incident_id("par-10"),
    )


def test_the_pool_reports_what_one_incident_at_a_time_reports(
    store: LedgerStore, keys: SampleKeys, attacker: Attacker
) -> None:
    names = _ledger(store, keys)
    _tamper(store, attacker)
    one_by_one = [verify_incident(store, h.incident_id, keys.registry) for h in store.incidents()]

    pooled = verify_all(store, keys.registry, workers=2)
    in_process = verify_all(store, keys.registry, workers=1)

    assert pooled == in_process == one_by_one
    failed = {r.incident_id for r in pooled if not r.ok}
    assert failed == {sample_incident_id(n) for n in ("par-3", "par-7", "par-10")}
    assert {r.incident_id for r in pooled} == {sample_incident_id(n) for n in names}
    found = [p for r in pooled if r.incident_id == sample_incident_id("par-3") for p in r.problems]
    assert (
        [p.what for p in found if p.check == "signature"]
        == [p.what for p in found if "envelope rejected (bad-signature)" in p.what]
        != []
    )


def test_batches_keep_the_incidents_order_and_hold_about_the_asked_events() -> None:
    heads = [IncidentHead(f"i{n}", size, n, "", "", "", None) for n, size in enumerate([6, 3, 2, 6, 6, 1])]  # type: ignore[arg-type]

    batches = incident_batches(heads, events=8)

    assert [i for batch in batches for i in batch] == [h.incident_id for h in heads]
    assert batches == [["i0", "i1"], ["i2", "i3"], ["i4", "i5"]]
