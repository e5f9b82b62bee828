"""Diagnosis events for the repairer's tests: the typed ``DiagnosisCompleted`` / ``DiagnosisAbstained`` payloads
the diagnoser publishes, built from only what a test cares about (the hypothesis, its suspect, hints, evidence and
the DataHub context summary); the rest of the report is empty and the incident's fields are ``sample_events``'."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contracts.catalogue import Hypothesis
from contracts.common import PolicyRef
from contracts.events.diagnosis import (
    ContextSummary,
    DiagnosisAbstained,
    DiagnosisCompleted,
    DiagnosisReport,
    EvidenceItem,
    RepairHints,
    Suspect,
)
from tests.support.sample_events import artifact, gate, workspace


def diagnosis_report(
    *,
    suspect: Suspect | dict[str, Any] | None = None,
    hints: RepairHints | dict[str, Any] | None = None,
    context_summary: ContextSummary | dict[str, Any] | None = None,
    evidence: Sequence[EvidenceItem | dict[str, Any]] = (),
) -> DiagnosisReport:
    return DiagnosisReport(
        evidence=[EvidenceItem.model_validate(_evidence(item)) for item in evidence],
        hypotheses=[],
        invalid_values={},
        suspect=Suspect.model_validate(suspect) if suspect is not None else None,
        repair_hints=RepairHints.model_validate(hints or {}),
        context_digest="0" * 64,
        context_summary=ContextSummary.model_validate(context_summary or {}),
    )


def diagnosis_completed(
    hypothesis: Hypothesis | str,
    *,
    confidence: float = 0.8,
    suspect: Suspect | dict[str, Any] | None = None,
    hints: RepairHints | dict[str, Any] | None = None,
    context_summary: ContextSummary | dict[str, Any] | None = None,
    evidence: Sequence[EvidenceItem | dict[str, Any]] = (),
    run_id: str = "run-1",
) -> DiagnosisCompleted:
    report = diagnosis_report(suspect=suspect, hints=hints, context_summary=context_summary, evidence=evidence)
    return DiagnosisCompleted(
        **_incident(run_id), report=report, hypothesis=Hypothesis(hypothesis), confidence=confidence
    )


def diagnosis_abstained(reason: str, *, run_id: str = "run-1") -> DiagnosisAbstained:
    return DiagnosisAbstained(**_incident(run_id), report=diagnosis_report(), reason=reason)


def _incident(run_id: str) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "workspace": workspace(),
        "policy": PolicyRef(name="churn", artifact=artifact(b"policy")),
        "gate": gate(),
    }


def _evidence(item: EvidenceItem | dict[str, Any]) -> EvidenceItem | dict[str, Any]:
    """An evidence item given as the fields a test cares about (``kind``, ``values``): the rest filled in."""
    if isinstance(item, EvidenceItem):
        return item
    return {"evidence_id": f"e-{item['kind']}", "summary": item["kind"], "source": "test", **item}
