"""Where in the code a named cause points: the unguarded division the change introduced on the feature path,
else the first changed function on the cause's path, else the first changed file on it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from contracts.catalogue import Hypothesis
from services.diagnoser.evidence import Evidence, EvidenceKind
from services.diagnoser.incident_evidence import IncidentEvidence


class SuspectedLocation(BaseModel):
    model_config = ConfigDict(frozen=True)

    file: str
    function: str | None
    lines: tuple[int, int] | None
    division_line: int | None
    divisor: str | None
    evidence_id: str


def suspected_location(collected: IncidentEvidence, hypothesis: Hypothesis | None) -> SuspectedLocation | None:
    """For a cause in the code: the introduced unguarded division, else the first changed function on the
    cause's path (feature modules for a transformation, elsewhere for a training change)."""
    if hypothesis not in (Hypothesis.FEATURE_TRANSFORMATION, Hypothesis.TRAINING_CONFIG_CHANGE):
        return None
    code = collected.first(EvidenceKind.CODE_CHANGE)
    if code is None:
        return None
    on_feature_path = hypothesis == Hypothesis.FEATURE_TRANSFORMATION
    if on_feature_path:
        for division in code.values["unguarded_divisions"]:
            return SuspectedLocation(
                file=division["file"],
                function=division["function"],
                lines=_function_lines(code, division["file"], division["function"]),
                division_line=division["line"],
                divisor=division["divisor"],
                evidence_id=code.id,
            )
    for function in code.values["functions"]:
        if function["on_feature_path"] == on_feature_path and function["status"] != "removed":
            lines = function["lines"]
            return SuspectedLocation(
                file=function["file"],
                function=function["function"],
                lines=tuple(lines) if lines else None,
                division_line=None,
                divisor=None,
                evidence_id=code.id,
            )
    files = code.values["feature_files_changed" if on_feature_path else "other_files_changed"]
    if files:
        return SuspectedLocation(
            file=files[0], function=None, lines=None, division_line=None, divisor=None, evidence_id=code.id
        )
    return None


def _function_lines(code: Evidence, file: str, function: str) -> tuple[int, int] | None:
    for item in code.values["functions"]:
        if item["file"] == file and item["function"] == function and item["lines"]:
            return tuple(item["lines"])  # type: ignore[return-value]
    return None
