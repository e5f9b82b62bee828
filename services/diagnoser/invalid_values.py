"""Invalid (empty, unparsable, non-finite) feature values the base and the candidate feature code produced on
the same rows, as the feature recomputation counted them; zero when the recomputation was unavailable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from services.diagnoser.evidence import EvidenceKind
from services.diagnoser.incident_evidence import IncidentEvidence


class InvalidValueFigures(BaseModel):
    model_config = ConfigDict(frozen=True)

    base: int
    candidate: int
    base_by_column: dict[str, int]
    candidate_by_column: dict[str, int]


def invalid_value_figures(collected: IncidentEvidence) -> InvalidValueFigures:
    item = collected.first(EvidenceKind.FEATURE_RECOMPUTATION)
    values = item.values if item is not None and item.values.get("available") else {}
    return InvalidValueFigures(
        base=values.get("base_invalid", 0),
        candidate=values.get("candidate_invalid", 0),
        base_by_column=values.get("base_invalid_by_feature", {}),
        candidate_by_column=values.get("candidate_invalid_by_feature", {}),
    )
