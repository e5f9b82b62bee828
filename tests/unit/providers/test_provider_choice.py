"""The context service reads the DataHub it is configured for, and says what is missing when it cannot."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.datahub.file_provider import FileContextProvider
from libs.datahub.mcp_provider import McpContextProvider
from libs.datahub.provider_choice import context_provider_from
from libs.datahub.sdk_provider import SdkContextProvider
from libs.settings import SettingsError, load_settings


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.setenv("MODELGUARD_DATAHUB_FILES", str(tmp_path / "metadata.json"))
    return load_settings()


def test_each_choice_builds_its_provider(settings) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(context_provider_from(settings, {}), FileContextProvider)
    sdk = context_provider_from(settings, {"MODELGUARD_CONTEXT_PROVIDER": "sdk", "DATAHUB_GMS_URL": "http://gms"})
    assert isinstance(sdk, SdkContextProvider)
    mcp = context_provider_from(settings, {"MODELGUARD_CONTEXT_PROVIDER": "mcp", "DATAHUB_MCP_URL": "http://m/mcp"})
    assert isinstance(mcp, McpContextProvider)


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"MODELGUARD_CONTEXT_PROVIDER": "sdk"}, "needs DATAHUB_GMS_URL"),
        ({"MODELGUARD_CONTEXT_PROVIDER": "mcp"}, "needs DATAHUB_MCP_URL"),
        ({"MODELGUARD_CONTEXT_PROVIDER": "graphql"}, "must be one of file, sdk, mcp"),
    ],
)
def test_a_missing_or_unknown_setting_is_named(settings, env: dict[str, str], says: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SettingsError, match=says):
        context_provider_from(settings, env)
