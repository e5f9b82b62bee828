"""Which DataHub the context service reads (``libs/datahub/provider_choice.py``), parsed once with the process's
settings: ``MODELGUARD_CONTEXT_PROVIDER`` (``file``, the default: MCP JSON files; ``sdk``: GMS through the SDK at
``DATAHUB_GMS_URL``; ``mcp``: the DataHub MCP server at ``DATAHUB_MCP_URL``). Addresses only: the token
(``DATAHUB_GMS_TOKEN``) is a secret, read from the secrets mapping the context service's composition root hands in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from libs.settings_error import SettingsError

PROVIDERS = ("file", "sdk", "mcp")


@dataclass(frozen=True)
class ContextProviderSettings:
    kind: str = "file"
    gms_url: str | None = None
    mcp_url: str | None = None


def context_provider_settings_from(environ: Mapping[str, str]) -> ContextProviderSettings:
    kind = environ.get("MODELGUARD_CONTEXT_PROVIDER", "").strip() or "file"
    if kind not in PROVIDERS:
        raise SettingsError(f"MODELGUARD_CONTEXT_PROVIDER must be one of {', '.join(PROVIDERS)}, got {kind!r}")
    return ContextProviderSettings(
        kind=kind,
        gms_url=environ.get("DATAHUB_GMS_URL", "").strip() or None,
        mcp_url=environ.get("DATAHUB_MCP_URL", "").strip() or None,
    )
