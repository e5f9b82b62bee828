"""Context from a live DataHub through the SDK (``DataHubGraph``): the ``sdk`` provider.

The provider fetches the aspects around the model (see :mod:`libs.datahub.sdk_scope_closure` for which,
and :mod:`libs.datahub.sdk_fetch` for the REST calls), builds the same :class:`MetadataGraph` the file
provider builds, and assembles the snapshot with the same code, so file and sdk snapshots of the same
metadata are equal apart from provenance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from datahub.ingestion.graph.client import DataHubGraph
from datahub.ingestion.graph.config import DatahubClientConfig

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.graph import MetadataGraph
from libs.datahub.provenance import ProvenanceStamp
from libs.datahub.sdk_errors import ContextUnavailable, describe_error
from libs.datahub.sdk_fetch import SDK_PROVIDER, SdkAspectSource
from libs.datahub.sdk_scope_closure import DEFAULT_MAX_ENTITIES, close_scope
from libs.datahub.snapshot_assembly import WalkLimits, assemble_snapshot

CAPABILITY_GAPS = (
    "sdk provider: lineage is walked hop by hop from entity aspects and incoming relationships "
    "(GET /openapi/relationships/v1), not read from DataHub's lineage search",
    "sdk provider: no schema history; only the latest version of each aspect is read",
    "sdk provider: assertions and incidents are found through relationships to entities in scope "
    "(Asserts, IncidentOn); ones that name only a column (schemaField urn) are not found",
)


@dataclass(frozen=True)
class GmsConnection:
    """Where GMS is. ``token`` is sent as a bearer token and never printed (``repr`` hides it)."""

    server: str
    token: str | None = None
    timeout_sec: float = 10.0
    retry_max_times: int = 1

    def __repr__(self) -> str:
        return f"GmsConnection(server={self.server!r}, token={'***' if self.token else None})"

    def graph(self) -> DataHubGraph:
        config = DatahubClientConfig(
            server=self.server,
            token=self.token,
            timeout_sec=self.timeout_sec,
            retry_max_times=self.retry_max_times,
            openapi_ingestion=False,
        )
        return DataHubGraph(config)


class SdkContextProvider:
    """Reads a live DataHub on every ``collect``; raises :class:`ContextUnavailable` when it cannot."""

    def __init__(
        self,
        connection: GmsConnection,
        limits: WalkLimits | None = None,
        max_entities: int = DEFAULT_MAX_ENTITIES,
        graph_factory: Callable[[GmsConnection], DataHubGraph] | None = None,
    ) -> None:
        self._connection = connection
        self._limits = limits or WalkLimits()
        self._max_entities = max_entities
        self._graph_factory = graph_factory or GmsConnection.graph

    @property
    def name(self) -> str:
        return SDK_PROVIDER

    def collect(self, model_urn: str, fetched_at: str) -> ContextSnapshot:
        server = self._connection.server
        try:
            graph = self._graph_factory(self._connection)
        except Exception as error:
            raise ContextUnavailable(
                SDK_PROVIDER, server, f"cannot configure the client: {describe_error(error)}"
            ) from None
        try:
            source = SdkAspectSource(graph, server)
            source.check_connection()
            closed = close_scope(source, model_urn, self._limits, self._max_entities)
        finally:
            graph.close()
        return assemble_snapshot(
            MetadataGraph.from_records(closed.records),
            model_urn,
            ProvenanceStamp(SDK_PROVIDER, fetched_at),
            self._limits,
            source_warnings=(*CAPABILITY_GAPS, *source.warnings, *closed.warnings),
        )
