"""The diagnosis outcome in the contract's words (DiagnosisCompleted / DiagnosisAbstained)."""

from __future__ import annotations

from pydantic import BaseModel

from contracts.context_snapshot import ContextSnapshot
from contracts.events.context import ContextCollected
from contracts.events.diagnosis import (
    ContextSummary,
    DeploymentRef,
    DiagnosisAbstained,
    DiagnosisCompleted,
    DiagnosisReport,
    EvidenceItem,
    RankedHypothesis,
    Suspect,
)
from libs.canonical_json import canonical_bytes, sha256_hex
from services.diagnoser.handler import DiagnosisOutcome


def context_summary(context: ContextSnapshot) -> ContextSummary:
    return ContextSummary(
        model_owners=sorted({o.owner_urn for o in context.owners if o.entity_urn == context.model_urn}),
        deployments=[DeploymentRef(urn=d.urn, status=d.status) for d in context.deployments],
        upstream_datasets=sorted(
            {p.urns[0] for p in context.upstream_paths if p.urns and p.urns[0].startswith("urn:li:dataset:")}
        ),
        provider=context.provider,
    )


def diagnosis_report(outcome: DiagnosisOutcome, collected: ContextCollected) -> DiagnosisReport:
    suspected = outcome.suspected
    return DiagnosisReport(
        evidence=[
            EvidenceItem(evidence_id=e.id, kind=str(e.kind), summary=e.summary, values=e.values, source=str(e.source))
            for e in outcome.evidence
        ],
        hypotheses=[
            RankedHypothesis(
                name=h.name,
                score=h.score,
                confidence=str(h.confidence_level),
                supporting=list(h.supporting_evidence_ids),
                counter=list(h.counter_evidence_ids),
                explanation=h.description,
            )
            for h in outcome.hypotheses
        ],
        invalid_values={"base": outcome.invalid_values.base, "candidate": outcome.invalid_values.candidate},
        suspect=Suspect(file=suspected.file, function=suspected.function, divisor=suspected.divisor)
        if suspected is not None and suspected.function
        else None,
        context_digest=collected.context_digest,
        context_summary=context_summary(collected.context),
    )


def diagnosis_event(collected: ContextCollected, outcome: DiagnosisOutcome) -> BaseModel:
    common = {**collected.carried(), "report": diagnosis_report(outcome, collected)}
    if outcome.decision == "diagnosed" and outcome.chosen_hypothesis and outcome.confidence is not None:
        return DiagnosisCompleted(**common, hypothesis=outcome.chosen_hypothesis, confidence=outcome.confidence)
    return DiagnosisAbstained(**common, reason=outcome.abstention_reason or "no hypothesis was chosen")


def abstention_for_failed_command(
    collected: ContextCollected, command: str, reason: str, output_tail: str
) -> BaseModel:
    """A workspace command that cannot run is itself a finding a person must see: abstain and say why."""
    evidence = EvidenceItem(
        evidence_id="ev-" + sha256_hex(canonical_bytes([command, reason, output_tail]))[:16],
        kind="workspace_command_failed",
        summary=f"the workspace's {command} command failed: {reason}",
        values={"command": command, "reason": reason, "output_tail": output_tail},
        source="code",
    )
    report = DiagnosisReport(
        evidence=[evidence],
        hypotheses=[],
        invalid_values={},
        suspect=None,
        context_digest=collected.context_digest,
        context_summary=context_summary(collected.context),
    )
    return DiagnosisAbstained(
        **collected.carried(),
        report=report,
        reason=f"no diagnosis: the workspace's {command} command failed ({reason}); see the evidence",
    )
