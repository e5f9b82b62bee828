"""Where the services' small state lives: MODELGUARD_STATE_URL, else a PostgreSQL ledger's URL, else SQLite files."""

from __future__ import annotations

import pytest

from libs.settings import SettingsError, load_settings
from libs.state.location import STATE_URL_ENV, StateUrlError, state_url_from
from libs.state.open_state import state_database
from libs.state.postgres_state import PostgresState
from libs.state.sqlite_state import SqliteState

PG_LEDGER = "postgresql+psycopg://mg:secret@db:5432/modelguard"


@pytest.mark.parametrize(
    ("environ", "ledger", "expected"),
    [
        ({}, "sqlite:///home/ledger.sqlite", None),
        ({}, PG_LEDGER, PG_LEDGER),
        ({}, "postgresql://mg@db/modelguard", "postgresql+psycopg://mg@db/modelguard"),
        ({STATE_URL_ENV: "postgres://mg@state/s"}, "sqlite:///l", "postgresql+psycopg://mg@state/s"),
        ({STATE_URL_ENV: "sqlite"}, PG_LEDGER, None),
        ({STATE_URL_ENV: " "}, PG_LEDGER, PG_LEDGER),
    ],
)
def test_the_state_url_follows_the_variable_then_the_ledger(
    environ: dict[str, str], ledger: str, expected: str | None
) -> None:
    assert state_url_from(environ, ledger) == expected


@pytest.mark.parametrize("raw", ["mysql://root:hunter2@db/x", "/var/lib/state", "sqlite:///x.db", "redis://h"])
def test_anything_else_is_refused_in_one_line_without_its_credentials(raw: str) -> None:
    with pytest.raises(StateUrlError) as refused:
        state_url_from({STATE_URL_ENV: raw}, "sqlite:///l")
    message = str(refused.value)
    assert STATE_URL_ENV in message and "\n" not in message and "hunter2" not in message


def test_settings_choose_the_adapter(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.delenv(STATE_URL_ENV, raising=False)
    monkeypatch.delenv("MODELGUARD_LEDGER_URL", raising=False)
    assert isinstance(state_database(load_settings()), SqliteState)
    monkeypatch.setenv("MODELGUARD_LEDGER_URL", PG_LEDGER)
    chosen = state_database(load_settings())
    assert isinstance(chosen, PostgresState) and "secret" not in chosen.describe()
    monkeypatch.setenv(STATE_URL_ENV, "mongodb://x")
    with pytest.raises(SettingsError, match=STATE_URL_ENV):
        load_settings()
