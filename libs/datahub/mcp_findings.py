"""What the MCP provider learned from the DataHub MCP server's tools, before it becomes aspects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class McpFindings:
    """Raw tool answers, keyed by urn.

    ``entities``: ``get_entities`` answers; ``upstream`` / ``downstream``: one-hop ``get_lineage``
    neighbours of the urns that were asked (absent key = not asked); ``aspect_values``: current values
    from ``get_aspect_history`` by (urn, aspect name); ``tools``: what the server lists.
    """

    model_urn: str
    tools: frozenset[str] = frozenset()
    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    upstream: dict[str, list[str]] = field(default_factory=dict)
    downstream: dict[str, list[str]] = field(default_factory=dict)
    aspect_values: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
