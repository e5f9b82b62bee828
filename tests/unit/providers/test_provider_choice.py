"""The context service reads the DataHub it is configured for, and says what is missing when it cannot."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.datahub.file_provider import FileContextProvider
from libs.datahub.mcp_provider import McpContextProvider
from libs.datahub.provider_choice import context_provider_from
from libs.datahub.sdk_provider import SdkContextProvider
from libs.settings import SettingsError, load_settings

CHOICE_VARIABLES = ("MODELGUARD_CONTEXT_PROVIDER", "DATAHUB_GMS_URL", "DATAHUB_MCP_URL")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.setenv("MODELGUARD_DATAHUB_FILES", str(tmp_path / "metadata.json"))
    for name in CHOICE_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("env", "provider"),
    [
        ({}, FileContextProvider),
        ({"MODELGUARD_CONTEXT_PROVIDER": "sdk", "DATAHUB_GMS_URL": "http://gms"}, SdkContextProvider),
        ({"MODELGUARD_CONTEXT_PROVIDER": "mcp", "DATAHUB_MCP_URL": "http://m/mcp"}, McpContextProvider),
    ],
)
def test_each_choice_builds_its_provider(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], provider: type) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert isinstance(context_provider_from(load_settings(), {}), provider)


def test_the_token_comes_from_the_secrets_not_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_CONTEXT_PROVIDER", "sdk")
    monkeypatch.setenv("DATAHUB_GMS_URL", "http://gms")
    monkeypatch.setenv("DATAHUB_GMS_TOKEN", "a-gms-token-value")
    settings = load_settings()
    assert "a-gms-token-value" not in repr(settings)
    provider = context_provider_from(settings, {"DATAHUB_GMS_TOKEN": "the-handed-in-token"})
    assert isinstance(provider, SdkContextProvider)
    assert provider._connection.token == "the-handed-in-token"  # the GMS client is built with it


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"MODELGUARD_CONTEXT_PROVIDER": "sdk"}, "needs DATAHUB_GMS_URL"),
        ({"MODELGUARD_CONTEXT_PROVIDER": "mcp"}, "needs DATAHUB_MCP_URL"),
    ],
)
def test_a_missing_address_is_named(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], says: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=says):
        context_provider_from(load_settings(), {})


def test_an_unknown_choice_is_refused_when_the_settings_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_CONTEXT_PROVIDER", "graphql")
    with pytest.raises(SettingsError, match="MODELGUARD_CONTEXT_PROVIDER must be one of file, sdk, mcp, got 'graphql'"):
        load_settings()
