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
    RepairHints,
    Suspect,
)
from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.asset_ownership import asset_ownership
from services.diagnoser.cause_datasets import DATASET_URN_PREFIX, cause_datasets, datasets_most_upstream_first
from services.diagnoser.diagnosis import IncidentDiagnosis
from services.diagnoser.markdown_report import render_markdown


def context_summary(context: ContextSnapshot, hints: RepairHints | None = None) -> ContextSummary:
    """What people-facing phases need: owners (flat, and per asset with their records), deployments, the upstream
    datasets, and the datasets a cause in the data lies in (from the faulty columns ``hints`` name)."""
    upstream = upstream_dataset_urns(context)
    return ContextSummary(
        model_owners=sorted({o.owner_urn for o in context.owners if o.entity_urn == context.model_urn}),
        deployments=[DeploymentRef(urn=d.urn, status=d.status) for d in context.deployments],
        upstream_datasets=sorted(
            {p.urns[0] for p in context.upstream_paths if p.urns and p.urns[0].startswith(DATASET_URN_PREFIX)}
        ),
        upstream_owners=sorted({o.owner_urn for o in context.owners if o.entity_urn in upstream}),
        provider=context.provider,
        model_ownership=asset_ownership(context, context.model_urn),
        dataset_ownership=[asset_ownership(context, urn) for urn in datasets_most_upstream_first(context)],
        cause_datasets=cause_datasets(context, hints or RepairHints()),
    )


def upstream_dataset_urns(context: ContextSnapshot) -> frozenset[str]:
    """Every dataset the model's upstream lineage reaches (any position on any upstream path)."""
    return frozenset(urn for path in context.upstream_paths for urn in path.urns if urn.startswith(DATASET_URN_PREFIX))


def incident_diagnosis_report(outcome: IncidentDiagnosis, collected: ContextCollected) -> DiagnosisReport:
    """The report of a diagnosis made on ``IncidentInputs``: evidence with strength and method, every
    hypothesis with its supporting and counter evidence, the counterfactual, the cause location, the hints."""
    suspected = outcome.suspected
    return DiagnosisReport(
        evidence=[
            EvidenceItem(
                evidence_id=e.id,
                kind=str(e.kind),
                summary=e.summary,
                values=e.values,
                source=str(e.source),
                strength=e.strength,
                method=e.method or None,
            )
            for e in outcome.evidence
        ],
        hypotheses=[
            RankedHypothesis(
                name=h.name,
                score=h.score,
                confidence=confidence_word(h.score, outcome.thresholds),
                supporting=list(h.supporting_evidence_ids),
                counter=list(h.counter_evidence_ids),
                explanation=h.description,
                measured_share=h.measured_share,
            )
            for h in outcome.hypotheses
        ],
        invalid_values={"base": outcome.invalid_values.base, "candidate": outcome.invalid_values.candidate},
        suspect=Suspect(file=suspected.file, function=suspected.function, divisor=suspected.divisor)
        if suspected is not None and suspected.function
        else None,
        repair_hints=outcome.repair_hints,
        counterfactual=dict(outcome.counterfactual),
        cause_location=outcome.cause_location if outcome.cause_location in ("code", "data") else None,
        context_digest=collected.context_digest,
        markdown=render_markdown(outcome),
        context_summary=context_summary(collected.context, outcome.repair_hints),
        runs=list(outcome.runs),
        evaluations=outcome.evaluations,
        metric_source=outcome.metric_source,
    )


def confidence_word(score: float, thresholds: DiagnosisPolicy) -> str:
    if score >= thresholds.confidence_high:
        return "high"
    return "medium" if score >= thresholds.confidence_medium else "low"


def diagnosis_event(collected: ContextCollected, outcome: IncidentDiagnosis) -> BaseModel:
    common = {**collected.carried(), "report": incident_diagnosis_report(outcome, collected)}
    if outcome.decision == "diagnosed" and outcome.chosen_hypothesis and outcome.confidence is not None:
        return DiagnosisCompleted(**common, hypothesis=outcome.chosen_hypothesis, confidence=outcome.confidence)
    return DiagnosisAbstained(**common, reason=outcome.abstention_reason or "no hypothesis was chosen")
