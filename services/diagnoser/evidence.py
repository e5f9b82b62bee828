"""Evidence: one computed observation with a stable id that hypotheses and reports cite.

The id is a short digest of (kind, subject, values), so the same observation computed twice from the
same inputs gets the same id, and a changed figure gets a new one.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from libs.canonical_json import canonical_bytes, sha256_hex

EVIDENCE_ID_LENGTH = 16


class EvidenceKind(StrEnum):
    FUNCTION_CHANGED = "code.function_changed"
    UNGUARDED_DIVISION = "code.unguarded_division"
    CODE_CHANGE_SCOPE = "code.change_scope"
    INVALID_FEATURE_VALUES = "data.invalid_feature_values"
    SOURCE_ANOMALIES = "data.source_anomalies"
    SOURCE_DATA_IDENTITY = "data.source_identity"
    METRIC_DELTA = "evaluation.metric_delta"
    LINEAGE_PATH = "metadata.lineage_path"
    ASSERTION_RESULT = "metadata.assertion_result"
    UPSTREAM_INCIDENT = "metadata.upstream_incident"


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


def make_evidence(
    kind: EvidenceKind, subject: str, values: dict[str, Any], summary: str, source: EvidenceSource
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
    )


def of_kind(evidence: list[Evidence], kind: EvidenceKind) -> list[Evidence]:
    return [item for item in evidence if item.kind == kind]
