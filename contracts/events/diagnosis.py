"""Events of the diagnosis phase: ranked hypotheses on computed evidence, or an abstention."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from contracts.common import Frozen, IncidentState


class EvidenceItem(Frozen):
    evidence_id: str
    kind: str
    summary: str
    values: dict[str, Any] = Field(default_factory=dict)
    source: str


class RankedHypothesis(Frozen):
    name: str
    score: float = Field(ge=0, le=1)
    confidence: str
    supporting: list[str]
    counter: list[str]
    explanation: str


class Suspect(Frozen):
    file: str
    function: str
    divisor: str | None = None


class DeploymentRef(Frozen):
    urn: str
    status: str | None = None


class ContextSummary(Frozen):
    """What people-facing phases need from the DataHub context, carried so they need not fetch it again."""

    model_owners: list[str] = Field(default_factory=list)
    deployments: list[DeploymentRef] = Field(default_factory=list)
    upstream_datasets: list[str] = Field(default_factory=list)
    provider: str | None = None


class DiagnosisReport(Frozen):
    evidence: list[EvidenceItem]
    hypotheses: list[RankedHypothesis]
    invalid_values: dict[str, int] = Field(description="invalid feature values on base and candidate")
    suspect: Suspect | None
    context_digest: str
    context_summary: ContextSummary = Field(default_factory=ContextSummary)


class DiagnosisCompleted(IncidentState):
    report: DiagnosisReport
    hypothesis: str
    confidence: float = Field(ge=0, le=1)


class DiagnosisAbstained(IncidentState):
    report: DiagnosisReport
    reason: str
