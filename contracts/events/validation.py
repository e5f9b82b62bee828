"""Events of the validation phase: the repair re-checked in an isolated copy."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from contracts.catalogue import Hypothesis
from contracts.common import Frozen, IncidentState
from contracts.events.diagnosis import DiagnosisReport
from contracts.events.repair import PatchSummary


class ValidationCheck(Frozen):
    name: str
    passed: bool
    values: dict[str, Any] = Field(default_factory=dict)


class ValidationReport(Frozen):
    checks: list[ValidationCheck]
    metric_after_repair: float | None
    invalid_values_after: int | None
    tests_passed: int
    tests_failed: int
    source_unchanged: bool


class RepairValidated(IncidentState):
    diagnosis: DiagnosisReport
    hypothesis: Hypothesis
    confidence: float
    patch: PatchSummary
    validation: ValidationReport


class ValidationFailed(IncidentState):
    diagnosis: DiagnosisReport
    hypothesis: Hypothesis
    confidence: float
    patch: PatchSummary
    validation: ValidationReport
    reason: str
