"""Events of the repair phase: a bounded patch from a named strategy, or a reasoned refusal."""

from __future__ import annotations

from pydantic import Field

from contracts.common import ArtifactRef, Frozen, IncidentState
from contracts.events.diagnosis import DiagnosisReport


class PatchSummary(Frozen):
    strategy: str
    files: list[str]
    added_lines: int = Field(ge=0)
    removed_lines: int = Field(ge=0)
    diff: str
    artifact: ArtifactRef


class RepairProposed(IncidentState):
    diagnosis: DiagnosisReport
    hypothesis: str
    confidence: float
    patch: PatchSummary


class RepairWithheld(IncidentState):
    diagnosis: DiagnosisReport
    hypothesis: str | None
    reason: str
    violations: list[str] = Field(default_factory=list)
