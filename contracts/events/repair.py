"""Events of the repair phase: a bounded patch from a named strategy, or a reasoned refusal."""

from __future__ import annotations

from pydantic import Field

from contracts.catalogue import Hypothesis, RepairStrategy
from contracts.common import ArtifactRef, AssetOwners, Frozen, IncidentState
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
        default_factory=list, description="the urns of ``owners``, each once, in their order (kept from 1.0)"
    )
    owners: list[AssetOwners] = Field(
        default_factory=list,
        description="who to tell, per affected asset with the owners DataHub records for it: for a cause in the "
        "data (named, or every candidate of an abstention) the datasets it lies in first, then the model; "
        "otherwise the model. An asset with no owner recorded has an empty list (since 1.1)",
    )
