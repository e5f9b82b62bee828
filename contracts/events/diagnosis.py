"""Events of the diagnosis phase: ranked hypotheses on computed evidence, or an abstention."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from contracts.common import Frozen, GateResult, PolicyRef, WorkspaceRefs


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


class DiagnosisReport(Frozen):
    evidence: list[EvidenceItem]
    hypotheses: list[RankedHypothesis]
    invalid_values: dict[str, int] = Field(description="invalid feature values on base and candidate")
    suspect: Suspect | None
    context_digest: str


class DiagnosisCompleted(Frozen):
    run_id: str
    workspace: WorkspaceRefs
    policy: PolicyRef
    gate: GateResult
    report: DiagnosisReport
    hypothesis: str
    confidence: float = Field(ge=0, le=1)


class DiagnosisAbstained(Frozen):
    run_id: str
    workspace: WorkspaceRefs
    policy: PolicyRef
    gate: GateResult
    report: DiagnosisReport
    reason: str
