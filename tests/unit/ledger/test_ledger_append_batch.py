"""Appending a batch in one transaction: the same chain, positions and no-ops as appending one by one."""

from __future__ import annotations

from pathlib import Path

from libs.ledger.store import LedgerStore
from libs.ledger.verify import verify_all
from tests.support.sample_events import SampleKeys, abstained_incident, repaired_incident


def _store(path: Path) -> LedgerStore:
    store = LedgerStore(f"sqlite:///{path}")
    store.create_schema()
    return store


def test_a_batch_chains_each_incident_exactly_as_one_by_one_appends_do(tmp_path: Path) -> None:
    keys = SampleKeys.generate()
    first, second = repaired_incident(keys, "a"), abstained_incident(keys, "b")
    interleaved = [e for pair in zip(first, second, strict=False) for e in pair] + first[len(second) :]
    with _store(tmp_path / "one.db") as one, _store(tmp_path / "batch.db") as batch:
        singles = [one.append(e) for e in interleaved]
        batched = batch.append_batch(interleaved[:4]) + batch.append_batch(interleaved[4:])
        assert [(r.position, r.sequence, r.hash) for r in batched] == [
            (r.position, r.sequence, r.hash) for r in singles
        ]
        assert all(r.appended for r in batched)
        assert all(r.ok for r in verify_all(batch, keys.registry))
        assert [row.hash for row in batch.events_after(0)] == [row.hash for row in one.events_after(0)]


def test_a_repeat_in_the_batch_or_in_the_ledger_is_a_no_op_naming_the_row_that_holds_it(tmp_path: Path) -> None:
    keys = SampleKeys.generate()
    chain = repaired_incident(keys, "c")
    with _store(tmp_path / "l.db") as store:
        stored = store.append_batch(chain[:2])
        again = store.append_batch([chain[1], chain[2], chain[2], chain[0]])
        assert [r.appended for r in again] == [False, True, False, False]
        assert again[0] == stored[1]._replace(appended=False)
        assert again[2].position == again[1].position and again[3].position == stored[0].position
        assert store.count() == 3 and store.append_batch([]) == []
