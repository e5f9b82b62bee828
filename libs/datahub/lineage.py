"""Multi-hop lineage walks over a :class:`MetadataGraph`, and the model -> deployment links.

Paths are maximal simple paths: a walk stops at a root (nothing further upstream), a leaf (nothing
further downstream), ``max_hops``, or a cycle. Every returned :class:`LineagePath` lists its urns in
data-flow order (most upstream first), whichever direction it was found in.

Deployments are not lineage in DataHub (``mlModelProperties.deployments`` is ``DeployedTo`` without
``isLineage``), so a lineage search stops at the model. :func:`deployments_of` follows the model's own
edges to ``mlModelDeployment`` entities and says so in a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from contracts.context_snapshot import LineagePath
from libs.datahub.graph import LineageHop, MetadataGraph

DEFAULT_MAX_HOPS = 12
DEFAULT_MAX_PATHS = 1000
DEPLOYMENT_ENTITY_TYPE = "mlModelDeployment"

StopReason = Literal["root", "leaf", "max_hops", "cycle"]


@dataclass(frozen=True)
class _Chain:
    urns: tuple[str, ...]
    relationships: tuple[str, ...]


@dataclass(frozen=True)
class DeploymentLinks:
    deployment_urns: tuple[str, ...]
    paths: tuple[LineagePath, ...]
    warnings: tuple[str, ...]


def walk_upstream(
    graph: MetadataGraph, urn: str, max_hops: int = DEFAULT_MAX_HOPS, max_paths: int = DEFAULT_MAX_PATHS
) -> list[LineagePath]:
    """Every maximal upstream path from ``urn`` (e.g. raw dataset -> job -> feature dataset -> feature -> model)."""
    found = _maximal_chains(urn, graph.upstream_of, max_hops, max_paths, end_reason="root")
    return [
        LineagePath(
            direction="upstream",
            urns=tuple(reversed(chain.urns)),
            relationships=tuple(reversed(chain.relationships)),
            via_lineage=True,
            stop_reason=reason,
        )
        for chain, reason in found
    ]


def walk_downstream(
    graph: MetadataGraph, urn: str, max_hops: int = DEFAULT_MAX_HOPS, max_paths: int = DEFAULT_MAX_PATHS
) -> list[LineagePath]:
    """Every maximal downstream path from ``urn``: what depends on it, down to models and their groups."""
    found = _maximal_chains(urn, graph.downstream_of, max_hops, max_paths, end_reason="leaf")
    return [
        LineagePath(
            direction="downstream",
            urns=chain.urns,
            relationships=chain.relationships,
            via_lineage=True,
            stop_reason=reason,
        )
        for chain, reason in found
    ]


def deployments_of(graph: MetadataGraph, model_urn: str) -> DeploymentLinks:
    """The model's deployments, from its own edges to mlModelDeployment entities (not lineage)."""
    paths: list[LineagePath] = []
    warnings: list[str] = []
    deployments: list[str] = []
    for edge in graph.out_edges(model_urn):
        if graph.entity_type(edge.destination) != DEPLOYMENT_ENTITY_TYPE or edge.destination in deployments:
            continue
        deployments.append(edge.destination)
        paths.append(
            LineagePath(
                direction="deployment",
                urns=(model_urn, edge.destination),
                relationships=(edge.relationship,),
                via_lineage=edge.is_lineage,
                stop_reason="leaf",
            )
        )
        warnings.append(
            f"deployment {edge.destination} is linked to {model_urn} by {edge.declared_in} "
            f"({edge.relationship}), not by lineage: DataHub lineage search stops at the model"
        )
        if not graph.has_metadata(edge.destination):
            warnings.append(
                f"deployment {edge.destination} named in {edge.declared_in} of {model_urn} "
                "has no metadata in the source: its status is unknown (dangling reference)"
            )
    return DeploymentLinks(tuple(sorted(deployments)), tuple(paths), tuple(warnings))


def _maximal_chains(
    start: str,
    neighbours: Callable[[str], tuple[LineageHop, ...]],
    max_hops: int,
    max_paths: int,
    end_reason: StopReason,
) -> list[tuple[_Chain, StopReason]]:
    results: list[tuple[_Chain, StopReason]] = []
    stack = [_Chain((start,), ())]
    while stack and len(results) < max_paths:
        chain = stack.pop()
        hops = neighbours(chain.urns[-1])
        hop_count = len(chain.relationships)
        if not hops:
            if hop_count:
                results.append((chain, end_reason))
            continue
        if hop_count >= max_hops:
            results.append((chain, "max_hops"))
            continue
        fresh = [hop for hop in hops if hop.urn not in chain.urns]
        if not fresh:
            if hop_count:
                results.append((chain, "cycle"))
            continue
        for hop in reversed(fresh):
            stack.append(_Chain((*chain.urns, hop.urn), (*chain.relationships, hop.edge.relationship)))
    return results
