"""`modelguard verify` over a ledger whose events and checkpoints were signed before and after a key rotation
(`modelguard keys rotate`): the retired keys stay in the registry, so everything verifies; without them in the
registry the same ledger fails, naming the events they signed."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from libs.ledger import LedgerStore
from libs.ledger.external_head import HeadFile
from libs.ledger.sealing import seal_checkpoint
from libs.settings import Settings, load_settings
from libs.signing.keys import KeyRegistry, load_private_key
from modelguard.cli import main
from modelguard.stack import CLIENTS, SERVICES
from tests.support.sample_events import START, SampleKeys, repaired_incident, sample_incident_id

ROTATED = ("diagnoser", "ledger")


def _keys(settings: Settings) -> SampleKeys:
    registry = KeyRegistry.load(settings.key_registry_path)
    keys = {o: load_private_key(o, settings.keys_dir / f"{o}.key") for o in (*SERVICES, *CLIENTS)}
    return SampleKeys(keys, registry)


@pytest.fixture
def rotated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Settings:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    for name in ("MODELGUARD_LEDGER_URL", "MODELGUARD_KEYS_DIR", "MODELGUARD_LEDGER_HEAD_LOG"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert main(["keys", "create", "--all"]) == 0
    heads = [HeadFile(settings.ledger_head_path)]
    with LedgerStore(settings.ledger_url) as store:
        store.create_schema()
        before = _keys(settings)
        for signed in repaired_incident(before, "before-rotation"):
            store.append(signed)
        seal_checkpoint(store, before.keys["ledger"], heads)
        for owner in ROTATED:
            assert main(["keys", "rotate", owner]) == 0
        after = _keys(settings)
        assert all(after.keys[o].keyid != before.keys[o].keyid for o in ROTATED)
        for signed in repaired_incident(after, "after-rotation", start=START + timedelta(days=1)):
            store.append(signed)
        seal_checkpoint(store, after.keys["ledger"], heads)
    capsys.readouterr()
    return settings


def test_events_and_checkpoints_signed_before_and_after_a_rotation_verify(
    rotated_home: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify"]) == 0

    out = capsys.readouterr().out
    assert f"{sample_incident_id('before-rotation')}: 6 events, verified" in out
    assert f"{sample_incident_id('after-rotation')}: 6 events, verified" in out
    assert "checkpoints: 2 checked" in out and out.strip().endswith("verified")
    assert main(["keys", "list"]) == 0
    states = [line.split()[::3] for line in capsys.readouterr().out.splitlines()[1:]]
    assert sorted(s for s in states if s[0] in ROTATED) == [
        ["diagnoser", "active"],
        ["diagnoser", "retired"],
        ["ledger", "active"],
        ["ledger", "retired"],
    ]


def test_the_same_ledger_fails_once_the_retired_keys_are_dropped_from_the_registry(
    rotated_home: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    path = rotated_home.key_registry_path
    document = json.loads(path.read_text())
    document["keys"] = [k for k in document["keys"] if not k.get("retired")]
    path.write_text(json.dumps(document))

    assert main(["verify"]) == 1

    out = capsys.readouterr().out
    assert f"{sample_incident_id('before-rotation')}: 6 events, TAMPERED" in out
    assert f"{sample_incident_id('after-rotation')}: 6 events, verified" in out
    findings = [line for line in out.splitlines() if line.startswith("  ")]
    assert any("DiagnosisCompleted" in f and "unknown key" in f for f in findings), findings
    assert out.strip().startswith("inc-") and "FAILED" in out
