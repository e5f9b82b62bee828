"""Diagnose one incident from ``IncidentInputs``: collect the evidence, read the facts, score the catalogue,
decide, and point at the code and the repair hints of the named cause."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from contracts.catalogue import Hypothesis
from contracts.events.diagnosis import ExperimentRun, RepairHints
from libs.policy.diagnosis import DiagnosisPolicy
from libs.python_source.shared_parses import shared_parses
from services.diagnoser.catalogue.decision import CauseLocation, Decision, decide
from services.diagnoser.catalogue.facts import Facts, read_facts, unmeasured_facts
from services.diagnoser.catalogue.scoring import ScoredHypothesis, rank_hypotheses
from services.diagnoser.evidence import Evidence, EvidenceKind
from services.diagnoser.incident_evidence import IncidentEvidence, collect_incident_evidence
from services.diagnoser.inputs import IncidentInputs
from services.diagnoser.invalid_values import InvalidValueFigures, invalid_value_figures
from services.diagnoser.repair_hints import repair_hints
from services.diagnoser.suspected_location import SuspectedLocation, suspected_location

COUNTERFACTUAL_CELLS = ("base_on_approval", "base_on_incident", "candidate_on_approval", "candidate_on_incident")


class IncidentDiagnosis(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Literal["diagnosed", "abstained"]
    chosen_hypothesis: Hypothesis | None
    confidence: float | None
    abstention_code: str | None
    abstention_reason: str | None
    top_hypothesis: Hypothesis
    margin: float | None
    cause_location: CauseLocation
    metric: str
    counterfactual: dict[str, float | None]
    suspected: SuspectedLocation | None
    repair_hints: RepairHints
    invalid_values: InvalidValueFigures
    feature_files: tuple[str, ...]
    facts: dict[str, float]
    hypotheses: tuple[ScoredHypothesis, ...]
    evidence: tuple[Evidence, ...]
    thresholds: DiagnosisPolicy
    runs: tuple[ExperimentRun, ...] = ()
    """Every evaluation the diagnosis ran or took from its cache, in order."""
    evaluations: int | None = None
    metric_source: str | None = None


def diagnose_inputs(
    inputs: IncidentInputs,
    policy: DiagnosisPolicy,
    generated_globs: tuple[str, ...] = (),
) -> IncidentDiagnosis:
    """``policy`` is the central policy's ``diagnosis`` section (every threshold required);
    ``generated_globs`` its ``repair.generated_paths``."""
    with shared_parses():  # the diff, the import closure, each reader of the code and the hints read the same files
        collected = collect_incident_evidence(inputs, policy, generated_globs)
        facts = read_facts(list(collected.evidence))
        ranked = rank_hypotheses(facts, unmeasured=unmeasured_facts(list(collected.evidence)))
        decision = decide(ranked, facts, policy)
        return _outcome(inputs, collected, facts, ranked, decision, policy)


def _outcome(
    inputs: IncidentInputs,
    collected: IncidentEvidence,
    facts: Facts,
    ranked: list[ScoredHypothesis],
    decision: Decision,
    policy: DiagnosisPolicy,
) -> IncidentDiagnosis:
    counterfactual = collected.first(EvidenceKind.COUNTERFACTUAL)
    return IncidentDiagnosis(
        decision=decision.decision,
        chosen_hypothesis=decision.hypothesis,
        confidence=decision.score if decision.decision == "diagnosed" else None,
        abstention_code=decision.reason_code,
        abstention_reason=decision.reason,
        top_hypothesis=ranked[0].name,
        margin=decision.margin,
        cause_location=decision.cause_location,
        metric=inputs.gate.metric,
        counterfactual={name: counterfactual.values.get(name) for name in COUNTERFACTUAL_CELLS}
        if counterfactual is not None
        else {},
        suspected=suspected_location(collected, decision.hypothesis),
        repair_hints=repair_hints(collected, decision.hypothesis),
        invalid_values=invalid_value_figures(collected),
        feature_files=collected.feature_files,
        facts={str(fact): value.strength for fact, value in facts.items()},
        hypotheses=tuple(ranked),
        evidence=collected.evidence,
        thresholds=policy,
        runs=tuple(
            ExperimentRun(
                name=run.name,
                metric=run.metric,
                cached=run.cached,
                failure=run.failure,
                content_digest=run.content_digest,
            )
            for run in (inputs.trials.records if inputs.trials is not None else ())
        ),
        evaluations=inputs.trials.evaluations if inputs.trials is not None else None,
        metric_source=inputs.trials.metric_source if inputs.trials is not None else None,
    )
