"""The owners DataHub records for one asset, as the context collected them."""

from __future__ import annotations

from contracts.common import AssetOwners
from contracts.context_snapshot import ContextSnapshot


def asset_ownership(context: ContextSnapshot, urn: str) -> AssetOwners:
    """``urn`` with its owner records; none when DataHub records no owner for it."""
    return AssetOwners(asset=urn, owners=[owner for owner in context.owners if owner.entity_urn == urn])
