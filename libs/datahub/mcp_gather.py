"""Ask the DataHub MCP server's tools for everything around one model (the ``mcp`` provider's reads).

Tool calls, all with the argument names of ``mcp-server-datahub`` 0.8:

- ``get_lineage(urn, upstream, max_hops=1, max_results, offset)``: hop by hop, upstream from the model
  and downstream from it, up to ``max_hops``; plus the one-hop lineage the aspects need (features' sources,
  groups' training jobs, jobs' input jobs, the model's groups);
- ``get_entities(urns)``: every entity reached, ten urns a call;
- ``search(query="*", filter="entity_type = mlFeatureTable")`` then ``get_entities``: the feature tables
  that contain the model's features (``Contains`` is not lineage);
- ``get_dataset_assertions(urn, run_events_count=10)`` for every dataset reached, when the server offers
  it, then ``get_entities`` of the assertions;
- ``get_aspect_history(urns, aspect_names, limit=1)``: the current governance aspects of everything reached.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from datahub.utilities.urns.urn import guess_entity_type

from libs.datahub.mcp_client import McpToolSession
from libs.datahub.mcp_findings import McpFindings

PAGE_SIZE = 100
ENTITY_BATCH = 10
MAX_HISTORY_URNS = 10
MAX_HISTORY_PAIRS = 40
DATASET_HISTORY_ASPECTS = ("datasetProperties", "schemaMetadata", "upstreamLineage", "ownership", "status")
OTHER_HISTORY_ASPECTS = ("ownership", "status")
NEEDS_UPSTREAM = ("mlModel", "mlFeature", "mlModelGroup", "dataJob")
NEEDS_DOWNSTREAM = ("mlModel",)


class McpGatherer:
    def __init__(self, session: McpToolSession, model_urn: str, max_hops: int, max_search: int = 1000) -> None:
        self._session = session
        self._max_hops = max_hops
        self._max_search = max_search
        self.findings = McpFindings(model_urn=model_urn, tools=session.tool_names)

    async def gather(self) -> McpFindings:
        model = self.findings.model_urn
        reached = {model}
        reached |= await self._walk(model, upstream=True)
        reached |= await self._walk(model, upstream=False)
        for urn in sorted(reached):
            if guess_entity_type(urn) in NEEDS_UPSTREAM and urn not in self.findings.upstream:
                self.findings.upstream[urn] = await self._one_hop(urn, upstream=True)
            if guess_entity_type(urn) in NEEDS_DOWNSTREAM and urn not in self.findings.downstream:
                self.findings.downstream[urn] = await self._one_hop(urn, upstream=False)
        await self._fetch_entities(sorted(reached))
        await self._fetch_feature_tables({u for u in reached if guess_entity_type(u) == "mlFeature"})
        await self._fetch_assertions(sorted(u for u in reached if guess_entity_type(u) == "dataset"))
        scope = sorted(u for u in self.findings.entities if guess_entity_type(u) != "assertion")
        await self._fetch_aspect_history(scope)
        return self.findings

    async def _walk(self, start: str, upstream: bool) -> set[str]:
        hops = self.findings.upstream if upstream else self.findings.downstream
        seen = {start}
        frontier = [start]
        for _ in range(self._max_hops):
            next_frontier = []
            for urn in frontier:
                if urn not in hops:
                    hops[urn] = await self._one_hop(urn, upstream)
                next_frontier += [n for n in hops[urn] if n not in seen]
                seen.update(hops[urn])
            frontier = sorted(set(next_frontier))
            if not frontier:
                break
        return seen

    async def _one_hop(self, urn: str, upstream: bool) -> list[str]:
        key = "upstreams" if upstream else "downstreams"
        found: list[str] = []
        offset = 0
        while True:
            answer = await self._session.call(
                "get_lineage",
                {"urn": urn, "upstream": upstream, "max_hops": 1, "max_results": PAGE_SIZE, "offset": offset},
            )
            results = (answer.get(key) or {}) if isinstance(answer, dict) else {}
            page = [r["entity"]["urn"] for r in results.get("searchResults") or () if r.get("degree", 1) == 1]
            found += page
            offset += int(results.get("returned") or len(results.get("searchResults") or ()))
            if not results.get("hasMore") or not page:
                break
        return sorted(set(found))

    async def _fetch_entities(self, urns: Sequence[str]) -> None:
        wanted = [u for u in urns if u not in self.findings.entities]
        for batch in _batches(wanted, ENTITY_BATCH):
            answer = await self._session.call("get_entities", {"urns": list(batch)})
            for entity in answer if isinstance(answer, list) else [answer]:
                if not isinstance(entity, dict) or "urn" not in entity:
                    continue
                if "error" in entity:
                    self.findings.warnings.append(f"get_entities {entity['urn']}: {entity['error']}")
                    continue
                self.findings.entities[entity["urn"]] = entity

    async def _fetch_feature_tables(self, features: set[str]) -> None:
        if not features:
            return
        tables = await self._search("mlFeatureTable")
        await self._fetch_entities(tables)
        for table in tables:
            entity = self.findings.entities.get(table)
            contained = {f["urn"] for f in ((entity or {}).get("featureTableProperties") or {}).get("mlFeatures") or ()}
            if entity is not None and not contained & features:
                del self.findings.entities[table]

    async def _search(self, entity_type: str) -> list[str]:
        urns: list[str] = []
        while len(urns) < self._max_search:
            answer = await self._session.call(
                "search",
                {"query": "*", "filter": f"entity_type = {entity_type}", "num_results": 50, "offset": len(urns)},
            )
            page = [r["entity"]["urn"] for r in answer.get("searchResults") or ()]
            urns += page
            if not page or len(urns) >= int(answer.get("total") or 0):
                return urns
        self.findings.warnings.append(
            f"mcp provider: only the first {self._max_search} {entity_type} entities were searched"
        )
        return urns

    async def _fetch_assertions(self, datasets: Sequence[str]) -> None:
        if "get_dataset_assertions" not in self.findings.tools:
            self.findings.warnings.append(
                "mcp provider: the MCP server offers no get_dataset_assertions tool (DATA_QUALITY_TOOLS_ENABLED "
                "is off, or the server is older): assertions and their results are unknown"
            )
            return
        found: list[str] = []
        for dataset in datasets:
            start = 0
            while True:
                answer = await self._session.call(
                    "get_dataset_assertions", {"urn": dataset, "start": start, "count": 20, "run_events_count": 10}
                )
                data = answer.get("data") or {}
                page = [a["urn"] for a in data.get("assertions") or ()]
                found += page
                start += len(page)
                if not page or start >= int(data.get("total") or 0):
                    break
        await self._fetch_entities(sorted(set(found)))

    async def _fetch_aspect_history(self, urns: Sequence[str]) -> None:
        if "get_aspect_history" not in self.findings.tools:
            self.findings.warnings.append(
                "mcp provider: the MCP server offers no get_aspect_history tool: dataset properties, schemas and "
                "upstream lineage are unknown; ownership comes from get_entities"
            )
            return
        datasets = [u for u in urns if guess_entity_type(u) == "dataset"]
        others = [u for u in urns if guess_entity_type(u) != "dataset"]
        for group, aspects in ((datasets, DATASET_HISTORY_ASPECTS), (others, OTHER_HISTORY_ASPECTS)):
            per_call = max(1, min(MAX_HISTORY_URNS, MAX_HISTORY_PAIRS // len(aspects)))
            for batch in _batches(group, per_call):
                answer = await self._session.call(
                    "get_aspect_history",
                    {"urns": list(batch), "aspect_names": list(aspects), "limit": 1, "include_current": True},
                )
                self._keep_current_values(answer)

    def _keep_current_values(self, answer: Any) -> None:
        for result in answer.get("results") or ():
            current = result.get("current")
            if result.get("error"):
                self.findings.warnings.append(
                    f"get_aspect_history {result.get('aspectName')} of {result.get('urn')}: {result['error']}"
                )
            elif isinstance(current, dict) and current.get("valueTruncated"):
                self.findings.warnings.append(
                    f"get_aspect_history {result.get('aspectName')} of {result.get('urn')}: value truncated by "
                    "the MCP server's response budget; not used"
                )
            elif isinstance(current, dict) and isinstance(current.get("value"), dict):
                self.findings.aspect_values[(result["urn"], result["aspectName"])] = current["value"]


def _batches(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
