"""Context from the DataHub MCP server (``mcp-server-datahub``) through its tools: the ``mcp`` provider.

The provider reads with the server's tools (:mod:`libs.datahub.mcp_gather`), rebuilds the aspects the
answers carry (:mod:`libs.datahub.mcp_aspects`) and assembles the snapshot with the same code as the
file and sdk providers. What the MCP server cannot tell is listed in :data:`CAPABILITY_GAPS` and repeated
in every snapshot's warnings.
"""

from __future__ import annotations

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.graph import MetadataGraph
from libs.datahub.mcp_aspects import AspectRebuilder
from libs.datahub.mcp_client import MCP_PROVIDER, McpServerTarget, McpToolError, open_session, run_blocking
from libs.datahub.mcp_findings import McpFindings
from libs.datahub.mcp_gather import McpGatherer
from libs.datahub.provenance import ProvenanceStamp
from libs.datahub.sdk_errors import ContextUnavailable, describe_error
from libs.datahub.snapshot_assembly import WalkLimits, assemble_snapshot

REQUIRED_TOOLS = ("get_entities", "get_lineage")
CAPABILITY_GAPS = (
    "mcp provider: deployments are unknown: get_entities does not return mlModelProperties.deployments and "
    "get_lineage never reaches a deployment (DeployedTo is not lineage)",
    "mcp provider: model version, hyper-parameters and training metrics are not in get_entities answers",
    "mcp provider: feature data types (mlFeatureProperties.dataType) are not in get_entities answers",
    "mcp provider: schema field types are stripped from get_entities and get_aspect_history answers; they are "
    "inferred from nativeDataType with the SDK's resolve_sql_type",
    "mcp provider: column lineage declared by data jobs (dataJobInputOutput.fineGrainedLineages) is not "
    "exposed; dataset upstreamLineage is read exactly with get_aspect_history",
    "mcp provider: dataset profiles and incidents are not exposed by the MCP server's tools",
    "mcp provider: assertion runs are the newest 10 completed runs per assertion, without partition or run id",
    "mcp provider: only current aspect values are read (get_aspect_history with limit=1); the tool can page "
    "older schemaMetadata versions, but the snapshot holds the latest only",
    "mcp provider: lineage relationships of ML entities are rebuilt from get_lineage neighbours by entity "
    "type, not read from their aspects",
)


class McpContextProvider:
    """Reads through the MCP server on every ``collect``; raises :class:`ContextUnavailable` when it cannot."""

    def __init__(self, target: McpServerTarget, limits: WalkLimits | None = None) -> None:
        self._target = target
        self._limits = limits or WalkLimits()

    @property
    def name(self) -> str:
        return MCP_PROVIDER

    def collect(self, model_urn: str, fetched_at: str) -> ContextSnapshot:
        findings = self._gather(model_urn)
        records, warnings = AspectRebuilder(findings, f"mcp {self._target.describe()}").rebuild()
        return assemble_snapshot(
            MetadataGraph.from_records(records),
            model_urn,
            ProvenanceStamp(MCP_PROVIDER, fetched_at),
            self._limits,
            source_warnings=(*CAPABILITY_GAPS, *findings.warnings, *warnings),
        )

    def _gather(self, model_urn: str) -> McpFindings:
        async def work() -> McpFindings:
            async with open_session(self._target) as session:
                missing = [tool for tool in REQUIRED_TOOLS if tool not in session.tool_names]
                if missing:
                    raise ContextUnavailable(
                        MCP_PROVIDER, self._target.describe(), f"the MCP server lacks the tools {', '.join(missing)}"
                    )
                return await McpGatherer(session, model_urn, self._limits.max_hops).gather()

        try:
            return run_blocking(work)
        except ContextUnavailable:
            raise
        except McpToolError as error:
            raise ContextUnavailable(MCP_PROVIDER, self._target.describe(), str(error)) from None
        except Exception as error:
            cause = _root_cause(error)
            if isinstance(cause, ContextUnavailable):
                raise cause from None
            raise ContextUnavailable(MCP_PROVIDER, self._target.describe(), describe_error(cause)) from None


def _root_cause(error: BaseException) -> BaseException:
    """The first leaf of nested exception groups (anyio task groups wrap transport failures)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error
