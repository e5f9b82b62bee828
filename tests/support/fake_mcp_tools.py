"""Tool bodies and tool registration of the loopback DataHub MCP server (see :mod:`tests.support.fake_mcp_server`).

:func:`build_server` registers, under ``mcp-server-datahub`` 0.8's tool names (:data:`TOOL_NAMES`), the
bodies of :class:`FakeDataHubTools` over a metadata file (default: the CHURN scenario's, loaded with
:func:`libs.datahub.mcp_file.load_mcp_file`). Tools and what they answer, as the real server does (its
GraphQL selections, then its cleaning: no ``__typename``, no ``None``, no empty lists or objects):

- ``search(query, filter, num_results, offset)``: ``{start, count, total, searchResults[{entity{urn}}]}``;
  only ``filter="entity_type = <type>"`` is understood here.
- ``get_entities(urns)``: the ``GetEntity`` query's entity (one dict for one urn string, else a list).
  ML entities carry what the real query selects: names, descriptions, custom properties, ownership,
  feature table features; not ``mlModelProperties`` beyond those, not deployments.
- ``get_lineage(urn, column, query, filter, upstream, max_hops, max_results, offset)``:
  ``{upstreams|downstreams: {total, searchResults[{entity, degree}], offset, returned, hasMore}}``.
- ``list_schema_fields(urn, keywords, limit, offset)``.
- ``get_aspect_history(urns, aspect_names, from_version, limit, include_current)``: governance aspects
  only; the values are cleaned like every answer, so empty union members (schema field types such as
  ``{"com.linkedin.schema.NumberType": {}}``) disappear, as they do from the real tool.
- ``get_lineage_paths_between(source_urn, target_urn, ..., direction)``.
- ``get_dataset_assertions(urn, start, count, ..., run_events_count)`` (the real server's data-quality tool).

The search, entity, schema and lineage tools live here; ``get_aspect_history`` and ``get_dataset_assertions`` in
:mod:`tests.support.fake_mcp_governance`; the entity shapes in :mod:`tests.support.fake_mcp_answers`.
Every answer is one JSON text block plus structured content, as FastMCP sends it (:func:`_as_fastmcp_answer`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from datahub.emitter.mce_builder import make_schema_field_urn
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from libs.datahub.graph import MetadataGraph
from libs.datahub.lineage import walk_upstream
from libs.datahub.mcp_file import load_mcp_file
from tests.support.fake_mcp_answers import GRAPHQL_TYPES, EntityShapes, clean
from tests.support.fake_mcp_governance import GovernanceTools

CHURN_METADATA = Path(__file__).resolve().parents[2] / "fixtures/scenarios/churn-monthly-spend/datahub/metadata.json"


class FakeDataHubTools(GovernanceTools):
    """The tool bodies; each returns the JSON the real tool returns (governance ones from the mixin).

    The bodies carry no docstrings on purpose: :func:`build_server` registers each with its ``__doc__`` as the
    tool description, which stays empty.
    """

    def __init__(self, graph: MetadataGraph) -> None:
        self.graph = graph
        self.shapes = EntityShapes(graph)

    def search(self, query: str = "*", filter: str | None = None, num_results: int = 10, offset: int = 0) -> dict:
        entity_type = None
        if filter:
            key, _, value = filter.partition("=")
            if key.strip() != "entity_type" or not value.strip():
                raise ValueError(f"this fake understands only 'entity_type = <type>' filters, not {filter!r}")
            entity_type = value.strip()
        urns = [u for u in self.graph.entity_urns() if entity_type is None or self.graph.entity_type(u) == entity_type]
        page = urns[offset : offset + min(num_results, 50)]
        return clean(
            {
                "start": offset,
                "count": len(page),
                "total": len(urns),
                "searchResults": [{"entity": {"urn": u}} for u in page],
            }
        )

    def get_entities(self, urns: list[str] | str) -> list[dict] | dict:
        single = isinstance(urns, str) and not urns.strip().startswith("[")
        urn_list = [urns] if single else (json.loads(urns) if isinstance(urns, str) else urns)
        results = []
        for urn in (u.strip() for u in urn_list):
            if not self.shapes.exists(urn):
                if single:
                    raise ValueError(f"Entity {urn} not found")
                results.append({"error": f"Entity {urn} not found", "urn": urn})
                continue
            results.append(self.shapes.entity(urn))
        return results[0] if single else results

    def get_lineage(
        self,
        urn: str,
        column: str | None = None,
        query: str | None = None,
        filter: str | None = None,
        upstream: bool = True,
        max_hops: int = 1,
        max_results: int = 30,
        offset: int = 0,
    ) -> dict:
        if column:
            urn = make_schema_field_urn(urn, column)
        found: dict[str, int] = {}
        frontier = [urn]
        for degree in range(1, max(1, max_hops) + 1 if max_hops < 3 else 100):
            step = self.graph.upstream_of if upstream else self.graph.downstream_of
            frontier = [hop.urn for u in frontier for hop in step(u) if hop.urn not in found and hop.urn != urn]
            for neighbour in frontier:
                found.setdefault(neighbour, degree)
            if not frontier:
                break
        ordered = sorted(found, key=lambda u: (found[u], u))
        page = ordered[offset : offset + max_results]
        results = [
            {
                "entity": {"type": GRAPHQL_TYPES.get(self.graph.entity_type(u)), **self.shapes.entity(u)},
                "degree": found[u],
            }
            for u in page
        ]
        direction = "upstreams" if upstream else "downstreams"
        return {
            direction: clean(
                {
                    "total": len(ordered),
                    "searchResults": results,
                    "offset": offset,
                    "returned": len(results),
                    "hasMore": offset + len(results) < len(ordered),
                }
            )
        }

    def list_schema_fields(
        self, urn: str, keywords: list[str] | None = None, limit: int = 100, offset: int = 0
    ) -> dict:
        if not self.shapes.exists(urn):
            raise ValueError(f"Entity {urn} not found")
        fields = (self.shapes.entity(urn).get("schemaMetadata") or {}).get("fields", [])
        if keywords:
            wanted = [k.lower() for k in keywords]
            fields = [f for f in fields if any(k in f["fieldPath"].lower() for k in wanted)]
        page = fields[offset : offset + limit]
        return {
            "urn": urn,
            "fields": page,
            "totalFields": len((self.shapes.entity(urn).get("schemaMetadata") or {}).get("fields", [])),
            "returned": len(page),
            "remainingCount": max(0, len(fields) - offset - len(page)),
            "matchingCount": len(fields) if keywords else None,
            "offset": offset,
        }

    def get_lineage_paths_between(
        self,
        source_urn: str,
        target_urn: str,
        source_column: str | None = None,
        target_column: str | None = None,
        direction: str | None = None,
    ) -> dict:
        paths = [p.urns for p in walk_upstream(self.graph, target_urn) if source_urn in p.urns]
        if not paths:
            paths = [p.urns for p in walk_upstream(self.graph, source_urn) if target_urn in p.urns]
        chains = sorted({urns[urns.index(source_urn) :] if source_urn in urns else urns for urns in paths})
        if not chains:
            raise ValueError(f"No lineage path found between {source_urn} and {target_urn} in either direction")
        return {
            "metadata": {
                "queryType": "lineage-path-trace",
                "direction": direction or "auto-discovered-downstream",
                "pathType": "dataset-level",
            },
            "source": {"urn": source_urn},
            "target": {"urn": target_urn},
            "pathCount": len(chains),
            "paths": [
                {"path": [{"urn": u, "type": GRAPHQL_TYPES.get(self.graph.entity_type(u))} for u in chain]}
                for chain in chains
            ],
        }


TOOL_NAMES = (
    "search", "get_entities", "get_lineage", "list_schema_fields", "get_aspect_history",
    "get_lineage_paths_between", "get_dataset_assertions",
)  # fmt: skip


def build_server(metadata: Path = CHURN_METADATA, tools: tuple[str, ...] = TOOL_NAMES) -> MCPServer:
    """An MCPServer named ``datahub`` exposing ``tools`` over the metadata file."""
    graph = MetadataGraph.from_records(load_mcp_file(metadata).records)
    bodies = FakeDataHubTools(graph)
    server = MCPServer(name="datahub")
    for name in tools:
        server.add_tool(_as_fastmcp_answer(getattr(bodies, name)), name=name, description=getattr(bodies, name).__doc__)
    return server


def _as_fastmcp_answer(body: Any) -> Any:
    """Wrap a tool body so its answer is one JSON text block plus structured content (FastMCP's shape)."""
    import functools
    import inspect

    @functools.wraps(body)
    def tool(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            result = body(*args, **kwargs)
        except Exception as error:
            return CallToolResult(
                content=[TextContent(type="text", text=f"Error calling tool: {error}")], is_error=True
            )
        structured = result if isinstance(result, dict) else {"result": result}
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(result))], structured_content=structured
        )

    tool.__signature__ = inspect.signature(body).replace(return_annotation=CallToolResult)  # type: ignore[attr-defined]
    return tool
