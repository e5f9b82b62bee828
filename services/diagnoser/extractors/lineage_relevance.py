"""Lineage relevance: is an asset DataHub logged a change for on a path into the model, and how far up.

Distance 0 is the dataset the windows' CSVs are extracts of; otherwise the number of hops from the asset
to the model along the snapshot's upstream lineage paths. An asset on no path is not relevant; with neither
a dataset urn nor lineage the relevance is unknown (strength one half)."""

from __future__ import annotations

from collections.abc import Iterable

from contracts.context_snapshot import ContextSnapshot
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence

UNKNOWN_RELEVANCE = 0.5
METHOD = "hops from the asset to the model along the DataHub upstream lineage paths; 0 for the bundle's dataset"


def asset_distance(urn: str, dataset_urn: str | None, context: ContextSnapshot | None) -> int | None:
    if dataset_urn is not None and urn == dataset_urn:
        return 0
    if context is None:
        return None
    distances = [
        len(path.urns) - 1 - path.urns.index(urn)
        for path in context.upstream_paths
        if path.urns and path.urns[-1] == context.model_urn and urn in path.urns
    ]
    return min(distances) if distances else None


def relevance(urn: str, dataset_urn: str | None, context: ContextSnapshot | None) -> float:
    """1 for the model's own dataset, falling with distance; 0 off the lineage; one half when unknowable."""
    distance = asset_distance(urn, dataset_urn, context)
    if distance is not None:
        return 1.0 / (1.0 + max(0, distance - 1)) if distance else 1.0
    knows_lineage = dataset_urn is not None or (context is not None and bool(context.upstream_paths))
    return 0.0 if knows_lineage else UNKNOWN_RELEVANCE


def lineage_relevance_evidence(
    urns: Iterable[str], dataset_urn: str | None, context: ContextSnapshot | None
) -> Evidence:
    relevances = {urn: relevance(urn, dataset_urn, context) for urn in sorted(set(urns))}
    assets = {
        urn: {"distance": asset_distance(urn, dataset_urn, context), "relevance": value}
        for urn, value in relevances.items()
    }
    relevant = sorted(urn for urn, value in relevances.items() if value > 0)
    return make_evidence(
        EvidenceKind.LINEAGE_RELEVANCE,
        subject="changed_assets",
        values={"assets": assets, "relevant": relevant},
        summary=(
            f"{len(relevant)} of {len(assets)} changed asset(s) lie on a path into the model"
            + (f" (nearest: {min(relevant, key=lambda urn: assets[urn]['distance'] or 0)})" if relevant else "")
        ),
        source=EvidenceSource.METADATA,
        strength=max((float(figures["relevance"]) for figures in assets.values()), default=0.0),  # type: ignore[arg-type]
        method=METHOD,
    )
