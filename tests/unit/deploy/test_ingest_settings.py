"""The ingestion endpoint's settings: off without a port, a token of at least 16 characters read from the secrets
mapping only (never kept in Settings), and the stuck time (900 s by default, 0 for never, anything else refused
in one line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.events.evaluation_report import PRODUCER
from libs.settings import SettingsError, load_settings
from services.detector.ingest_server import ingest_token

TOKEN = "a-token-of-enough-characters"


@pytest.fixture(autouse=True)
def ingest_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.setenv("MODELGUARD_INGEST_PORT", "8088")
    monkeypatch.setenv("MODELGUARD_INGEST_TOKEN", TOKEN)
    for name in ("MODELGUARD_INGEST_STUCK_AFTER_S", "MODELGUARD_INGEST_HOST", "MODELGUARD_REPORTER_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("raw", "seconds"), [(None, 900.0), ("120", 120.0), ("0.5", 0.5), ("0", None)])
def test_the_stuck_time_has_a_default_and_zero_means_never(
    monkeypatch: pytest.MonkeyPatch, raw: str | None, seconds: float | None
) -> None:
    if raw is not None:
        monkeypatch.setenv("MODELGUARD_INGEST_STUCK_AFTER_S", raw)
    settings = load_settings()
    assert settings.ingest is not None and settings.ingest.stuck_after_s == seconds
    assert TOKEN not in repr(settings)


@pytest.mark.parametrize("raw", ["soon", "-1", "inf", "nan"])
def test_a_stuck_time_that_is_not_a_number_of_seconds_is_refused(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("MODELGUARD_INGEST_STUCK_AFTER_S", raw)
    with pytest.raises(SettingsError, match="MODELGUARD_INGEST_STUCK_AFTER_S must be a number of seconds"):
        load_settings()


def test_no_port_is_no_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODELGUARD_INGEST_PORT")
    assert load_settings().ingest is None


@pytest.mark.parametrize("raw", ["http", "70000", "-1"])
def test_a_port_that_is_not_a_tcp_port_is_refused(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("MODELGUARD_INGEST_PORT", raw)
    with pytest.raises(SettingsError, match="MODELGUARD_INGEST_PORT must be a TCP port number"):
        load_settings()


def test_the_address_and_the_reporters_key_have_defaults_and_follow_the_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest = load_settings().ingest
    assert ingest is not None
    assert (ingest.port, ingest.host, ingest.reporter_key_file) == (8088, "0.0.0.0", tmp_path / "keys/reporter.key")
    assert ingest.reporter_key_file.stem == PRODUCER  # the name the reports are signed under
    monkeypatch.setenv("MODELGUARD_INGEST_HOST", "127.0.0.1")
    monkeypatch.setenv("MODELGUARD_REPORTER_KEY_FILE", "/etc/modelguard/reporter/reporter.key")
    ingest = load_settings().ingest
    assert ingest is not None
    assert (ingest.host, ingest.reporter_key_file) == ("127.0.0.1", Path("/etc/modelguard/reporter/reporter.key"))


def test_the_token_is_read_from_the_secrets_handed_in() -> None:
    assert ingest_token({"MODELGUARD_INGEST_TOKEN": f"  {TOKEN}\n"}) == TOKEN


@pytest.mark.parametrize("secrets", [{}, {"MODELGUARD_INGEST_TOKEN": "short-but-set"}])
def test_a_missing_or_short_token_is_refused_without_saying_it(secrets: dict[str, str]) -> None:
    with pytest.raises(SettingsError, match="MODELGUARD_INGEST_TOKEN must be set, at least 16 characters") as caught:
        ingest_token(secrets)
    assert "short-but-set" not in str(caught.value)
