"""Owner records as the context service collects them from DataHub's ``ownership`` aspect."""

from __future__ import annotations

from contracts.common import AssetOwners
from contracts.context_snapshot import Owner, Provenance

FETCHED = "2026-11-29T12:00:00.000+00:00"


def owner(asset: str, who: str, kind: str = "TECHNICAL_OWNER", type_urn: str | None = None) -> Owner:
    return Owner(
        entity_urn=asset,
        owner_urn=who,
        type=kind,
        type_urn=type_urn,
        provenance=Provenance(provider="file", urn=asset, aspect="ownership", fetched_at=FETCHED),
    )


def owned(asset: str, *owners: tuple[str, str]) -> AssetOwners:
    """``asset`` with one owner record per (owner urn, ownership type); none: DataHub records no owner."""
    return AssetOwners(asset=asset, owners=[owner(asset, who, kind) for who, kind in owners])
