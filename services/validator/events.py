"""The validation report in the contract's words (RepairValidated / ValidationFailed)."""

from __future__ import annotations

from pydantic import BaseModel

from contracts.events.repair import RepairProposed
from contracts.events.validation import RepairValidated, ValidationCheck, ValidationFailed
from contracts.events.validation import ValidationReport as ReportContract
from services.validator.handler import ValidationReport


def report_contract(report: ValidationReport) -> ReportContract:
    return ReportContract(
        checks=[
            ValidationCheck(name=c.name, passed=c.passed, values={**c.values, "status": c.status, "detail": c.detail})
            for c in report.checks
        ],
        metric_after_repair=report.repaired_value,
        invalid_values_after=report.invalid_values_after,
        tests_passed=report.tests_passed or 0,
        tests_failed=(report.tests_failed or 0) + (report.tests_errors or 0),
        source_unchanged=report.source_unchanged,
    )


def validation_event(proposed: RepairProposed, report: ValidationReport) -> BaseModel:
    common = {
        **proposed.carried(),
        "diagnosis": proposed.diagnosis,
        "hypothesis": proposed.hypothesis,
        "confidence": proposed.confidence,
        "patch": proposed.patch,
        "validation": report_contract(report),
    }
    if report.passed:
        return RepairValidated(**common)
    return ValidationFailed(
        **common, reason=report.failure_reason or "failed checks: " + ", ".join(report.failed_checks)
    )
