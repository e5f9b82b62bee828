"""Answers of a downstream impact query: which models a change reaches, how, and who to tell."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Precision = Literal["field", "entity"]
"""``field``: traced through declared column-level lineage all the way to an ML feature or a job;
``entity``: traced through entity-level lineage (no column-level lineage, or columns whose sources are
not declared), so the model is possibly, not certainly, affected."""


@dataclass(frozen=True)
class Impact:
    model_urn: str
    deployments: tuple[str, ...]
    """From the model's mlModelProperties.deployments: DataHub lineage never reaches deployments."""
    owners: tuple[str, ...]
    path: tuple[str, ...]
    """Entity urns in data-flow order, from the changed asset down to the model."""
    precision: Precision = "entity"


@dataclass(frozen=True)
class ImpactReport:
    asset_urn: str
    field_paths: tuple[str, ...]
    impacts: tuple[Impact, ...]
    notes: tuple[str, ...] = ()
    truncated: bool = False
