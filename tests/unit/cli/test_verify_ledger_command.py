"""`modelguard verify` over a real ledger in a ModelGuard home: exit 0 when everything holds, non-zero with
one line per finding when the database lost its tail and the checkpoint over it, which only the head file in
the home still shows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from libs.ledger import LedgerStore
from libs.ledger.external_head import HeadFile
from libs.ledger.sealing import seal_checkpoint
from libs.settings import load_settings
from modelguard.cli import main
from tests.support.sample_events import PRODUCERS, SampleKeys, abstained_incident, repaired_incident, sample_incident_id


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("MODELGUARD_HOME", str(home))
    monkeypatch.delenv("MODELGUARD_LEDGER_URL", raising=False)
    monkeypatch.delenv("MODELGUARD_KEYS_DIR", raising=False)
    monkeypatch.delenv("MODELGUARD_LEDGER_HEAD_LOG", raising=False)
    settings = load_settings()
    keys = SampleKeys.generate([*PRODUCERS, "ledger"])
    settings.keys_dir.mkdir(parents=True)
    settings.key_registry_path.write_text(json.dumps(keys.registry.to_document()))
    heads = [HeadFile(settings.ledger_head_path)]
    with LedgerStore(settings.ledger_url) as store:
        store.create_schema()
        for signed in repaired_incident(keys, "cli-a"):
            store.append(signed)
        seal_checkpoint(store, keys.keys["ledger"], heads)
        for signed in abstained_incident(keys, "cli-b"):
            store.append(signed)
        seal_checkpoint(store, keys.keys["ledger"], heads)
    return home


def test_an_untouched_ledger_verifies(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify"]) == 0
    out = capsys.readouterr().out
    assert "checkpoints: 2 checked" in out and out.strip().endswith("verified")


def test_a_lost_tail_and_its_checkpoint_fail_with_one_line_per_finding(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(home / "ledger.sqlite") as db:
        for (trigger,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("DELETE FROM ledger_events WHERE position > 6")
        db.execute("DELETE FROM ledger_checkpoints WHERE position > 6")

    assert main(["verify"]) == 1

    findings = [line.strip() for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    lost = sample_incident_id("cli-b")
    assert findings == [
        f"incident {lost}: event 1 at position 7 is missing (external checkpoint 9 lists it)",
        f"incident {lost}: event 2 at position 8 is missing (external checkpoint 9 lists it)",
        f"incident {lost}: event 3 at position 9 is missing (external checkpoint 9 lists it)",
        "ledger: the database lacks or altered checkpoint(s) 9, which the external head file holds",
        "ledger: events after position 6 missing, checkpoint 9 (kept outside the database): the ledger was truncated",
    ]


def test_without_the_external_head_the_lost_tail_is_unseen_and_said_so(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "ledger-head.json").unlink()
    assert main(["verify"]) == 1  # a home whose head is gone while the database holds checkpoints: refused
    assert "holds no checkpoint though the database holds 2" in capsys.readouterr().out

    assert main(["verify", "--without-external-head"]) == 0
    assert "external heads: none: a lost tail with its checkpoints goes unseen" in capsys.readouterr().out
