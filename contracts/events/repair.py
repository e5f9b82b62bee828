"""Events of the repair phase: a bounded patch from a named strategy, or a reasoned refusal."""

from __future__ import annotations

from pydantic import Field

from contracts.catalogue import Hypothesis, RepairStrategy
from contracts.common import ArtifactRef, Frozen, IncidentState
from contracts.events.diagnosis import DiagnosisReport


class PatchSummary(Frozen):
    strategy: RepairStrategy
    files: list[str]
    added_lines: int = Field(ge=0)
    removed_lines: int = Field(ge=0)
    diff: str
    artifact: ArtifactRef


class RepairProposed(IncidentState):
    diagnosis: DiagnosisReport
    hypothesis: Hypothesis
    confidence: float
    patch: PatchSummary


class RepairWithheld(IncidentState):
    diagnosis: DiagnosisReport
    hypothesis: Hypothesis | None
    reason: str
    violations: list[str] = Field(default_factory=list)
    reason_code: str | None = Field(
        default=None, description='why, as a code; "cause_in_data" when no code repair is the right answer'
    )
    owners_to_notify: list[str] = Field(
        default_factory=list, description="owners of the model and of the faulty upstream data, for a data cause"
    )
