"""Where the context service's mirror lives: MODELGUARD_STATE_URL, else the ledger's PostgreSQL, else SQLite files;
and how many MCL records a batch holds."""

from __future__ import annotations

import pytest

from libs.settings import SettingsError, load_settings

PG = "postgresql+psycopg://modelguard@db:5432/modelguard"


def test_the_mirror_s_state_url_defaults_to_the_ledger_s_postgresql_and_to_none_beside_an_sqlite_ledger(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.delenv("MODELGUARD_STATE_URL", raising=False)
    monkeypatch.setenv("MODELGUARD_LEDGER_URL", PG)
    assert load_settings().state_url == PG
    monkeypatch.setenv("MODELGUARD_LEDGER_URL", "sqlite:////var/lib/modelguard/ledger.sqlite")
    assert load_settings().state_url is None
    monkeypatch.setenv("MODELGUARD_STATE_URL", "postgresql://state@db/state")
    assert load_settings().state_url == "postgresql+psycopg://state@db/state"


def test_a_state_url_that_is_not_postgresql_is_refused_with_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.setenv("MODELGUARD_STATE_URL", "sqlite:///state.sqlite")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "MODELGUARD_STATE_URL must be a postgresql:// URL" in str(caught.value) and "\n" not in str(caught.value)


def test_the_mcl_batch_size_is_read_and_checked(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.delenv("MODELGUARD_MCL_BATCH_MAX_RECORDS", raising=False)
    assert load_settings().mcl_batch_max_records == 2000
    monkeypatch.setenv("MODELGUARD_MCL_BATCH_MAX_RECORDS", "64")
    assert load_settings().mcl_batch_max_records == 64
    monkeypatch.setenv("MODELGUARD_MCL_BATCH_MAX_RECORDS", "0")
    with pytest.raises(SettingsError, match="MODELGUARD_MCL_BATCH_MAX_RECORDS must be at least 1"):
        load_settings()
