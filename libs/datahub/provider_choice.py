"""Which DataHub the context service reads: MCP JSON files (the embedded default), GMS through the SDK, or
the DataHub MCP server. Chosen by `MODELGUARD_CONTEXT_PROVIDER`; tokens come from the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping

from libs.datahub.file_provider import FileContextProvider
from libs.datahub.mcp_client import McpServerTarget
from libs.datahub.mcp_provider import McpContextProvider
from libs.datahub.provider import ContextProvider
from libs.datahub.sdk_provider import GmsConnection, SdkContextProvider
from libs.settings import Settings, SettingsError

PROVIDERS = ("file", "sdk", "mcp")


def context_provider_from(settings: Settings, env: Mapping[str, str] | None = None) -> ContextProvider:
    env = os.environ if env is None else env
    choice = env.get("MODELGUARD_CONTEXT_PROVIDER", "file")
    if choice == "file":  # with no files the snapshot is empty and says so: the code and data still speak
        return FileContextProvider(settings.datahub_files, root=settings.datahub_root)
    if choice == "sdk":
        server = env.get("DATAHUB_GMS_URL")
        if not server:
            raise SettingsError("MODELGUARD_CONTEXT_PROVIDER=sdk needs DATAHUB_GMS_URL")
        return SdkContextProvider(GmsConnection(server, env.get("DATAHUB_GMS_TOKEN") or None))
    if choice == "mcp":
        url = env.get("DATAHUB_MCP_URL")
        if not url:
            raise SettingsError("MODELGUARD_CONTEXT_PROVIDER=mcp needs DATAHUB_MCP_URL")
        return McpContextProvider(McpServerTarget(url=url, token=env.get("DATAHUB_GMS_TOKEN") or None))
    raise SettingsError(f"MODELGUARD_CONTEXT_PROVIDER must be one of {', '.join(PROVIDERS)}, got {choice!r}")
