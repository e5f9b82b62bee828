"""The console fails closed: no auth and no --insecure-local, an unusable token, a header that cannot be an
identity, or --insecure-local on a public address are each refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelguard.cli import main
from modelguard.console.config import (
    CONTEXT_METRICS_ENV,
    TOKEN_ENV,
    TOKEN_FILE_ENV,
    ConsoleConfigError,
    console_config,
)

TOKEN = "0123456789abcdef-token"


def test_without_any_auth_it_refuses_unless_insecure_local_on_loopback() -> None:
    with pytest.raises(ConsoleConfigError, match="no auth configured"):
        console_config({})
    assert not console_config({}, insecure_local=True).auth.configured
    assert console_config({}, insecure_local=True, host="::1").host == "::1"
    for public in ("0.0.0.0", "10.1.2.3", "console.example.com"):
        with pytest.raises(ConsoleConfigError, match="loopback address only"):
            console_config({}, insecure_local=True, host=public)


def test_a_token_comes_from_the_environment_or_a_file_never_both_and_never_short(tmp_path: Path) -> None:
    assert console_config({TOKEN_ENV: f" {TOKEN}\n"}).auth.token == TOKEN
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    assert console_config({}, token_file=str(token_file)).auth.token == TOKEN
    assert console_config({TOKEN_FILE_ENV: str(token_file)}).auth.token == TOKEN
    with pytest.raises(ConsoleConfigError, match="not both"):
        console_config({TOKEN_ENV: TOKEN}, token_file=str(token_file))
    token_file.write_text("short")
    with pytest.raises(ConsoleConfigError, match="16 characters or more"):
        console_config({}, token_file=str(token_file))
    with pytest.raises(ConsoleConfigError, match="cannot read the token file"):
        console_config({}, token_file=str(tmp_path / "missing"))


def test_the_trusted_header_is_a_plain_header_name_and_not_one_a_browser_sends_anyway() -> None:
    assert console_config({}, trusted_header="X-Forwarded-Email").auth.trusted_header == "x-forwarded-email"
    for bad in ("Authorization", "Cookie", "x forwarded", "x-user\r\nx-evil", ""):
        if bad:
            with pytest.raises(ConsoleConfigError):
                console_config({}, trusted_header=bad)


def test_the_token_is_never_in_the_auth_repr() -> None:
    auth = console_config({TOKEN_ENV: TOKEN}).auth
    assert TOKEN not in repr(auth) and "set" in repr(auth)


def test_the_command_refuses_in_one_line_with_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "nothing-ran"))
    assert main(["console"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("modelguard console: no auth configured") and err.count("\n") == 1
    assert main(["console", "--insecure-local", "--host", "0.0.0.0"]) == 2
    assert "loopback address only" in capsys.readouterr().err
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert main(["console"]) == 2  # a home where nothing has run: no ledger, none is created
    err = capsys.readouterr().err
    assert "nothing has run from" in err and TOKEN not in err
    assert not (tmp_path / "nothing-ran").exists()


def test_the_context_metrics_url_is_http_with_a_host_and_no_credentials() -> None:
    url = "http://modelguard-context:8080/metrics"
    assert console_config({TOKEN_ENV: TOKEN}, context_metrics=url).context_metrics == url
    assert console_config({TOKEN_ENV: TOKEN, CONTEXT_METRICS_ENV: url}).context_metrics == url
    assert console_config({TOKEN_ENV: TOKEN}).context_metrics is None  # then the embedded stack's, if it runs
    for bad in ("file:///etc/passwd", "javascript:alert(1)", "http://", "gopher://context/metrics", "context:8080"):
        with pytest.raises(ConsoleConfigError, match="not an http"):
            console_config({TOKEN_ENV: TOKEN}, context_metrics=bad)
    with pytest.raises(ConsoleConfigError, match="no credentials in the URL") as refused:
        console_config({TOKEN_ENV: TOKEN}, context_metrics="https://scraper:s3cret@context:8080/metrics")
    assert "s3cret" not in str(refused.value)
