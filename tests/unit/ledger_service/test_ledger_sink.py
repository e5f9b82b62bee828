"""The ledger service's sink: appends once, and signs checkpoints by count and after quiet intervals."""

from __future__ import annotations

from pathlib import Path

from libs.ledger import LedgerStore
from services.ledger.handler import LedgerSink
from tests.support.sample_events import Keys, detected, reported


def test_appends_once_and_checkpoints_by_count_and_by_time(tmp_path: Path) -> None:
    keys = Keys("reporter", "detector")
    store = LedgerStore(f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    store.create_schema()
    now = [100.0]
    checkpoints: list[float] = []
    sink = LedgerSink(store, checkpoint=lambda: checkpoints.append(now[0]), checkpoint_every=3, clock=lambda: now[0])
    first = reported(keys, run_id="r1")
    assert sink(first).appended and checkpoints == [100.0]  # the first append after a quiet interval
    assert not sink(first).appended  # a duplicate is a no-op and signs nothing
    now[0] = 101.0
    sink(detected(keys, first))
    assert checkpoints == [100.0]
    sink(reported(keys, run_id="r2"))  # third append: by count
    assert checkpoints == [100.0, 101.0]
    now[0] = 200.0
    sink(reported(keys, run_id="r3"))
    assert checkpoints == [100.0, 101.0, 200.0]
    assert store.count() == 4
