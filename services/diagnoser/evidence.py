"""Evidence: one computed observation with a stable id that hypotheses and reports cite.

The id is a short digest of (kind, subject, values), so the same observation computed twice from the
same inputs gets the same id, and a changed figure gets a new one.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from libs.canonical_json import canonical_bytes, sha256_hex

EVIDENCE_ID_LENGTH = 16


class EvidenceKind(StrEnum):
    COUNTERFACTUAL = "evaluation.counterfactual_attribution"
    CODE_CHANGE = "code.change"
    CHANGE_ISOLATION = "code.change_isolation"
    CONFIG_CHANGE = "code.config_change"
    FEATURE_RECOMPUTATION = "data.feature_recomputation"
    FEATURE_DRIFT = "data.feature_drift"
    READ_COLUMNS = "code.read_columns"
    SOURCE_SCHEMA = "data.source_schema"
    SOURCE_TYPES = "data.source_types"
    SOURCE_CATEGORIES = "data.source_categories"
    SOURCE_QUALITY = "data.source_quality"
    SOURCE_DRIFT = "data.source_drift"
    LABEL_SHIFT = "data.label_shift"
    DATA_INTERVENTIONS = "data.interventions"
    SCHEMA_HISTORY = "metadata.schema_history"
    ASSERTIONS = "metadata.assertions"
    DATASET_PROFILES = "metadata.dataset_profiles"
    CHANGE_TIMING = "metadata.change_timing"
    LINEAGE_RELEVANCE = "metadata.lineage_relevance"


class EvidenceSource(StrEnum):
    CODE = "code"
    DATA = "data"
    EVALUATION = "evaluation"
    METADATA = "metadata"


class Evidence(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    kind: EvidenceKind
    subject: str
    summary: str
    values: dict[str, Any]
    source: EvidenceSource
    strength: float = Field(default=1.0, ge=0.0, le=1.0)
    """How strongly the observation shows what its kind measures: 0 = not at all, 1 = unmistakably."""
    method: str = ""
    """How the figures were computed, in one sentence a reviewer can check."""


def make_evidence(
    kind: EvidenceKind,
    subject: str,
    values: dict[str, Any],
    summary: str,
    source: EvidenceSource,
    *,
    strength: float = 1.0,
    method: str = "",
) -> Evidence:
    """Build an Evidence whose id is derived from what it says, not when or where it was computed."""
    digest = sha256_hex(canonical_bytes({"kind": kind.value, "subject": subject, "values": values}))
    return Evidence(
        id=f"ev-{digest[:EVIDENCE_ID_LENGTH]}",
        kind=kind,
        subject=subject,
        summary=summary,
        values=values,
        source=source,
        strength=round(min(1.0, max(0.0, strength)), 4),
        method=method,
    )
