"""Competing root-cause hypotheses, each scored from the signals its evidence shows.

score = clamp(sum of weights of supporting signals that fired - sum of weights of counter signals that
fired, 0, 1). The weights below are policy: each hypothesis's supporting weights add up to 1.0, so a
score of 1.0 means every kind of support was observed and nothing spoke against it. The scores
themselves are computed from the evidence of one incident; nothing here knows any incident's figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from services.diagnoser.evidence import Evidence
from services.diagnoser.signals import Signal, detect_signals

FEATURE_TRANSFORMATION = "feature_transformation"
SOURCE_DATA_QUALITY = "source_data_quality"
TRAINING_CONFIGURATION = "training_configuration"

ConfidenceLevel = Literal["high", "medium", "low"]
CONFIDENCE_LEVELS: tuple[tuple[float, ConfidenceLevel], ...] = ((0.8, "high"), (0.5, "medium"), (0.0, "low"))


@dataclass(frozen=True)
class HypothesisWeights:
    name: str
    description: str
    support: dict[Signal, float]
    counter: dict[Signal, float]


WEIGHTS: tuple[HypothesisWeights, ...] = (
    HypothesisWeights(
        name=FEATURE_TRANSFORMATION,
        description="a changed function on the feature path turns valid source rows into invalid model inputs",
        support={
            Signal.INVALID_VALUES_INTRODUCED: 0.30,
            Signal.FEATURE_FUNCTION_CHANGED: 0.20,
            Signal.FEATURE_DIVISION_UNGUARDED: 0.15,
            Signal.BASE_CODE_CLEAN_ON_SAME_DATA: 0.15,
            Signal.METRIC_REGRESSED: 0.10,
            Signal.CHANGED_FEATURE_CODE_ON_LINEAGE: 0.10,
        },
        counter={
            Signal.NO_FEATURE_CODE_CHANGED: 0.50,
            Signal.METRIC_NOT_REGRESSED: 0.30,
            Signal.NO_INVALID_VALUES_INTRODUCED: 0.20,
            Signal.BASE_CODE_INVALID_ON_SAME_DATA: 0.15,
        },
    ),
    HypothesisWeights(
        name=SOURCE_DATA_QUALITY,
        description="the source data itself degraded; the code only passes the damage on",
        support={
            Signal.SOURCE_DATA_CHANGED: 0.25,
            Signal.SOURCE_ANOMALIES_INCREASED: 0.25,
            Signal.BASE_CODE_INVALID_ON_SAME_DATA: 0.20,
            Signal.ASSERTION_FAILING: 0.15,
            Signal.UPSTREAM_INCIDENT_OPEN: 0.10,
            Signal.SOURCE_ANOMALIES_PRESENT: 0.05,
        },
        counter={
            Signal.SOURCE_DATA_IDENTICAL: 0.35,
            Signal.METRIC_NOT_REGRESSED: 0.30,
            Signal.BASE_CODE_CLEAN_ON_SAME_DATA: 0.25,
            Signal.ASSERTION_PASSING: 0.10,
        },
    ),
    HypothesisWeights(
        name=TRAINING_CONFIGURATION,
        description="code or configuration off the feature path (training, model, evaluation) changed",
        support={
            Signal.OTHER_CODE_CHANGED: 0.40,
            Signal.NO_INVALID_VALUES_INTRODUCED: 0.20,
            Signal.NO_FEATURE_CODE_CHANGED: 0.10,
            Signal.METRIC_REGRESSED: 0.10,
            Signal.SOURCE_DATA_IDENTICAL: 0.10,
            Signal.CHANGED_OTHER_CODE_ON_LINEAGE: 0.10,
        },
        counter={
            Signal.NO_OTHER_CODE_CHANGED: 0.50,
            Signal.METRIC_NOT_REGRESSED: 0.30,
            Signal.INVALID_VALUES_INTRODUCED: 0.20,
        },
    ),
)


class SignalContribution(BaseModel):
    model_config = ConfigDict(frozen=True)

    signal: Signal
    weight: float
    evidence_ids: tuple[str, ...]


class RankedHypothesis(BaseModel):
    model_config = ConfigDict(frozen=True)

    rank: int
    name: str
    description: str
    score: float
    confidence_level: ConfidenceLevel
    support: tuple[SignalContribution, ...]
    counter: tuple[SignalContribution, ...]
    supporting_evidence_ids: tuple[str, ...]
    counter_evidence_ids: tuple[str, ...]


def rank_hypotheses(
    evidence: list[Evidence], weights: tuple[HypothesisWeights, ...] = WEIGHTS
) -> list[RankedHypothesis]:
    """Score every hypothesis and rank them, best first; ties keep the order of the weights table."""
    fired = detect_signals(evidence)
    scored = [_score(hypothesis, fired) for hypothesis in weights]
    ordered = sorted(enumerate(scored), key=lambda pair: (-pair[1][0], pair[0]))
    ranked = []
    for rank, (index, (score, support, counter)) in enumerate(ordered, start=1):
        hypothesis = weights[index]
        ranked.append(
            RankedHypothesis(
                rank=rank,
                name=hypothesis.name,
                description=hypothesis.description,
                score=score,
                confidence_level=confidence_level(score),
                support=support,
                counter=counter,
                supporting_evidence_ids=_ids(support),
                counter_evidence_ids=_ids(counter),
            )
        )
    return ranked


def confidence_level(score: float) -> ConfidenceLevel:
    for threshold, level in CONFIDENCE_LEVELS:
        if score >= threshold:
            return level
    return "low"


def _score(
    hypothesis: HypothesisWeights, fired: dict[Signal, list[str]]
) -> tuple[float, tuple[SignalContribution, ...], tuple[SignalContribution, ...]]:
    support = _contributions(hypothesis.support, fired)
    counter = _contributions(hypothesis.counter, fired)
    raw = sum(item.weight for item in support) - sum(item.weight for item in counter)
    return round(min(1.0, max(0.0, raw)), 4), support, counter


def _contributions(table: dict[Signal, float], fired: dict[Signal, list[str]]) -> tuple[SignalContribution, ...]:
    return tuple(
        SignalContribution(signal=signal, weight=weight, evidence_ids=tuple(fired[signal]))
        for signal, weight in table.items()
        if signal in fired
    )


def _ids(contributions: tuple[SignalContribution, ...]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for contribution in contributions:
        seen.update(dict.fromkeys(contribution.evidence_ids))
    return tuple(seen)
