"""The ledger service as wired: at start it puts the database's latest checkpoint in the head file, and its
timer seals the idle ledger's newest events into a checkpoint, in the database and in both external heads."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from libs.ledger import LedgerStore, write_checkpoint
from libs.ledger.external_head import HeadFile, HeadLog
from libs.settings import load_settings
from services.ledger.bootstrap import bootstrap
from tests.support.sample_events import PRODUCERS, SampleKeys, abstained_incident


def test_the_head_at_start_and_the_timer_seal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MODELGUARD_LEDGER_URL", raising=False)
    monkeypatch.setenv("MODELGUARD_LEDGER_HEAD_LOG", str(tmp_path / "worm" / "heads.jsonl"))
    monkeypatch.setenv("MODELGUARD_LEDGER_CHECKPOINT_INTERVAL_S", "0.001")
    settings = load_settings()
    keys = SampleKeys.generate([*PRODUCERS, "ledger"])
    events = abstained_incident(keys, "wired")
    with LedgerStore(settings.ledger_url) as store:
        store.create_schema()
        store.append(events[0])
        write_checkpoint(store, keys.keys["ledger"])  # a ledger from before the external heads

        service = bootstrap(settings, keys.keys["ledger"])
        head_file, head_log = HeadFile(settings.ledger_head_path), HeadLog(tmp_path / "worm" / "heads.jsonl")
        assert [h.position for h in head_file.heads()] == [1] == [h.position for h in head_log.heads()]

        for signed in events[1:]:
            store.append(signed)  # behind the service's back: nothing seals on these appends
        (timer,) = service.timers
        deadline = time.monotonic() + 60
        while not timer.tick() and time.monotonic() < deadline:  # until the events are older than the interval
            time.sleep(0.01)

        assert store.latest_checkpoint().position == 3  # type: ignore[union-attr]
        assert [h.position for h in head_file.heads()] == [3]
        assert [h.position for h in head_log.heads()] == [1, 3]
