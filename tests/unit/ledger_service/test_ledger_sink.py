"""The ledger service's sink: appends once, and signs checkpoints by count and after quiet intervals."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.ledger import LedgerStore, verify_checkpoints, verify_incident, write_checkpoint
from services.ledger.handler import CauseNotAppendedYet, LedgerSink
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


def test_an_effect_waits_for_its_cause_then_is_appended_in_causal_order(tmp_path: Path) -> None:
    keys = Keys("reporter", "detector")
    store = LedgerStore(f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    store.create_schema()
    now = [0.0]
    sink = LedgerSink(store, checkpoint=lambda: None, max_cause_wait_s=30, clock=lambda: now[0])
    cause = reported(keys)
    effect = detected(keys, cause)
    with pytest.raises(CauseNotAppendedYet):
        sink(effect)
    assert store.count() == 0
    sink(cause)
    sink(effect)
    rows = store.incident_events(cause.event.meta.incident_id)
    assert [r.event_type for r in rows] == ["EvaluationReported", "RegressionDetected"]


def test_an_orphan_is_appended_after_the_wait_and_verification_names_the_gap(tmp_path: Path) -> None:
    keys = Keys("reporter", "detector")
    store = LedgerStore(f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    store.create_schema()
    now = [0.0]
    sink = LedgerSink(store, checkpoint=lambda: None, max_cause_wait_s=30, clock=lambda: now[0])
    orphan = detected(keys, reported(keys))
    with pytest.raises(CauseNotAppendedYet):
        sink(orphan)
    now[0] = 31.0
    assert sink(orphan).appended
    report = verify_incident(store, orphan.event.meta.incident_id, keys.registry)
    assert not report.ok
    assert any(p.event_id == orphan.event.meta.event_id for p in report.problems)


def test_on_stop_every_appended_event_is_put_under_a_signed_checkpoint_once(tmp_path: Path) -> None:
    """A ledger stopping gracefully (LedgerSink.seal_uncovered, the ledger's on_stop) seals what no checkpoint covers
    yet, however recent; with nothing uncovered it seals nothing."""
    keys = Keys("reporter", "detector", "ledger")
    store = LedgerStore(f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    store.create_schema()
    sink = LedgerSink(store, checkpoint=lambda: write_checkpoint(store, keys["ledger"]), clock=lambda: 0.0)
    first = reported(keys)
    sink(first)  # sealed: the first append after a quiet interval
    sink(detected(keys, first))  # within the interval: under no checkpoint yet
    latest = store.latest_checkpoint()
    assert latest is not None and latest.position < store.count()

    assert sink.seal_uncovered() is True
    latest = store.latest_checkpoint()
    assert latest is not None and latest.position == store.count() == 2
    assert verify_checkpoints(store, keys.registry).ok
    assert sink.seal_uncovered() is False
    assert store.latest_checkpoint() == latest
