"""The port every DataHub context provider implements (MCP JSON files, the SDK, the MCP server)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from contracts.context_snapshot import ContextSnapshot


@runtime_checkable
class ContextProvider(Protocol):
    """Collects what DataHub knows around one model into a normalised snapshot.

    ``fetched_at`` is passed in (an injected clock) so the same metadata gives the same snapshot.
    """

    @property
    def name(self) -> str:
        """The provider name recorded in every Provenance ("file", "sdk", "mcp")."""
        ...

    def collect(self, model_urn: str, fetched_at: str) -> ContextSnapshot: ...
