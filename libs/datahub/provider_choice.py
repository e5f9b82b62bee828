"""Which DataHub the context service reads: MCP JSON files (the embedded default), GMS through the SDK, or
the DataHub MCP server, as ``settings.context_provider`` says (``libs/datahub/provider_settings.py``). The token
comes from ``secrets``, the mapping the composition root hands in (the process environment)."""

from __future__ import annotations

from collections.abc import Mapping

from libs.datahub.file_provider import FileContextProvider
from libs.datahub.mcp_client import McpServerTarget
from libs.datahub.mcp_provider import McpContextProvider
from libs.datahub.provider import ContextProvider
from libs.datahub.sdk_provider import GmsConnection, SdkContextProvider
from libs.settings import Settings, SettingsError


def context_provider_from(settings: Settings, secrets: Mapping[str, str]) -> ContextProvider:
    chosen = settings.context_provider
    token = secrets.get("DATAHUB_GMS_TOKEN") or None
    if chosen.kind == "sdk":
        if chosen.gms_url is None:
            raise SettingsError("MODELGUARD_CONTEXT_PROVIDER=sdk needs DATAHUB_GMS_URL")
        return SdkContextProvider(GmsConnection(chosen.gms_url, token))
    if chosen.kind == "mcp":
        if chosen.mcp_url is None:
            raise SettingsError("MODELGUARD_CONTEXT_PROVIDER=mcp needs DATAHUB_MCP_URL")
        return McpContextProvider(McpServerTarget(url=chosen.mcp_url, token=token))
    # file: with no files the snapshot is empty and says so: the code and data still speak
    return FileContextProvider(settings.datahub_files, root=settings.datahub_root)
