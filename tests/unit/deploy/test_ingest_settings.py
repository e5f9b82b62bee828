"""The ingestion endpoint's settings: off without a port, a token of at least 16 characters, and the stuck time
(900 s by default, 0 for never, anything else refused in one line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.settings import Settings, SettingsError, load_settings
from services.detector.ingest_server import ingest_settings

TOKEN = "a-token-of-enough-characters"


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.setenv("MODELGUARD_INGEST_PORT", "8088")
    monkeypatch.setenv("MODELGUARD_INGEST_TOKEN", TOKEN)
    return load_settings()


@pytest.mark.parametrize(("raw", "seconds"), [(None, 900.0), ("120", 120.0), ("0.5", 0.5), ("0", None)])
def test_the_stuck_time_has_a_default_and_zero_means_never(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, raw: str | None, seconds: float | None
) -> None:
    if raw is not None:
        monkeypatch.setenv("MODELGUARD_INGEST_STUCK_AFTER_S", raw)
    ingest = ingest_settings(settings)
    assert ingest is not None and ingest.stuck_after_s == seconds
    assert TOKEN not in repr(ingest)


@pytest.mark.parametrize("raw", ["soon", "-1", "inf", "nan"])
def test_a_stuck_time_that_is_not_a_number_of_seconds_is_refused(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("MODELGUARD_INGEST_STUCK_AFTER_S", raw)
    with pytest.raises(SettingsError, match="MODELGUARD_INGEST_STUCK_AFTER_S must be a number of seconds"):
        ingest_settings(settings)


def test_no_port_is_no_endpoint(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODELGUARD_INGEST_PORT")
    assert ingest_settings(settings) is None
