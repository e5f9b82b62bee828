"""Bad input to the command line gets one readable line and an exit code, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelguard.cli import main


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["submit", "--bundle", "/nonexistent"], 2, "is not a bundle folder"),
        (["investigate", "/nonexistent", "--out", "/tmp/never"], 2, "not a bundle"),
        (["bench", "diagnosis", "/nonexistent"], 2, "is not a folder of bundles"),
        (["incidents", "show"], 2, "needs an incident id"),
        (["emit-mcl", "/nonexistent.yaml"], 2, "is not a file"),
        (["verify", "--attestation", "/nonexistent.json"], None, "nonexistent"),
    ],
)
def test_one_readable_line(argv: list[str], code: int | None, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    result = main(argv)
    err = capsys.readouterr().err
    assert result != 0 and (code is None or result == code)
    assert says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_bad_setting_is_named(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MODELGUARD_KAFKA_SESSION_TIMEOUT_MS", "soon")
    assert main(["stack", "status"]) != 0
    err = capsys.readouterr().err
    assert "MODELGUARD_KAFKA_SESSION_TIMEOUT_MS must be an integer" in err and "Traceback" not in err
