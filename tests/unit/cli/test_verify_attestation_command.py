"""`modelguard verify --attestation FILE --offline`: an attestation re-signed with the publisher's own key and
other claims exits 1 with the reason; the genuine one exits 0, and with the chain's envelopes every one is
verified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from libs.attestation import IN_TOTO_PAYLOAD_TYPE, attest_publication
from libs.canonical_json import canonical_bytes
from libs.events.codec import envelope_bytes
from libs.signing.dsse import sign_envelope
from modelguard.cli import main
from tests.support.sample_events import SampleKeys, repaired_incident


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    keys = SampleKeys.generate()
    incident = repaired_incident(keys, "cli-attested")
    attestation = attest_publication(incident[-2], keys.keys["publisher"])
    statement = dict(attestation.statement)
    statement["predicate"] = {**statement["predicate"], "outcome": "repair_withheld"}
    resigned = envelope_bytes(sign_envelope(canonical_bytes(statement), IN_TOTO_PAYLOAD_TYPE, keys.keys["publisher"]))
    paths = {
        "keys": tmp_path / "registry.json",
        "genuine": tmp_path / "genuine.intoto.json",
        "resigned": tmp_path / "resigned.intoto.json",
        "chain": tmp_path / "chain.jsonl",
    }
    paths["keys"].write_text(json.dumps(keys.registry.to_document()))
    paths["genuine"].write_bytes(attestation.envelope_bytes)
    paths["resigned"].write_bytes(resigned)
    paths["chain"].write_text("".join(e.envelope_bytes.decode() + "\n" for e in incident[:-1]))
    return {name: str(path) for name, path in paths.items()}


def test_the_genuine_attestation_verifies_offline(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--attestation", files["genuine"], "--keys", files["keys"], "--offline"]) == 0
    assert "1 of 5 chain envelope(s) verified offline" in capsys.readouterr().out

    argv = ["verify", "--attestation", files["genuine"], "--keys", files["keys"], "--envelopes", files["chain"]]
    assert main([*argv, "--offline"]) == 0
    assert "5 of 5 chain envelope(s) verified offline" in capsys.readouterr().out


def test_a_publisher_re_signed_attestation_is_refused_offline(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", "--attestation", files["resigned"], "--keys", files["keys"], "--offline"]) == 1
    out = capsys.readouterr().out
    assert f"attestation {files['resigned']}: FAILED" in out
    assert "the signed claim(s) outcome are not what the source RepairValidated signed by validator says" in out
