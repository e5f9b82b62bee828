"""Score every hypothesis of the catalogue from the facts and rank them, best first."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from contracts.catalogue import CauseLocation, Hypothesis
from services.diagnoser.catalogue.facts import Fact, Facts
from services.diagnoser.catalogue.hypotheses import CATALOGUE, HypothesisSpec


class Contribution(BaseModel):
    model_config = ConfigDict(frozen=True)

    fact: Fact
    weight: float
    strength: float
    evidence_ids: tuple[str, ...]

    @property
    def points(self) -> float:
        return round(self.weight * self.strength, 4)


class ScoredHypothesis(BaseModel):
    model_config = ConfigDict(frozen=True)

    rank: int
    name: Hypothesis
    location: CauseLocation | None
    description: str
    score: float
    support: tuple[Contribution, ...]
    counter: tuple[Contribution, ...]
    measured_share: float = 1.0
    """The share of the support weight whose evidence could be measured; the score is never rescaled by it."""

    @property
    def supporting_evidence_ids(self) -> tuple[str, ...]:
        return _ids(self.support)

    @property
    def counter_evidence_ids(self) -> tuple[str, ...]:
        return _ids(self.counter)


def rank_hypotheses(
    facts: Facts, catalogue: tuple[HypothesisSpec, ...] = CATALOGUE, unmeasured: frozenset[Fact] = frozenset()
) -> list[ScoredHypothesis]:
    """Every hypothesis scored, plus ``unknown`` (1 - the best score); ties keep the catalogue's order.

    ``unmeasured`` facts (evidence that could not be computed) add nothing and count against nothing; each
    hypothesis reports the share of its support weight that was measured, so a score of 0.85 out of a
    measurable 0.85 reads differently from 0.85 out of 1.0."""
    scored = [_score(spec, facts, unmeasured) for spec in catalogue]
    best = max((item[0] for item in scored), default=0.0)
    entries: list[
        tuple[
            float, int, Hypothesis, CauseLocation | None, str, tuple[Contribution, ...], tuple[Contribution, ...], float
        ]
    ]
    entries = [
        (score, index, spec.name, spec.location, spec.description, support, counter, scale)
        for index, (spec, (score, support, counter, scale)) in enumerate(zip(catalogue, scored, strict=True))
    ]
    entries.append(
        (round(1.0 - best, 4), len(entries), Hypothesis.UNKNOWN, None, "no hypothesis is supported", (), (), 1.0)
    )
    entries.sort(key=lambda entry: (-entry[0], entry[1]))
    return [
        ScoredHypothesis(
            rank=rank,
            name=name,
            location=location,
            description=description,
            score=score,
            support=support,
            counter=counter,
            measured_share=scale,
        )
        for rank, (score, _, name, location, description, support, counter, scale) in enumerate(entries, start=1)
    ]


def _score(
    spec: HypothesisSpec, facts: Facts, unmeasured: frozenset[Fact]
) -> tuple[float, tuple[Contribution, ...], tuple[Contribution, ...], float]:
    support = _contributions(spec.support, facts)
    counter = _contributions(spec.counter, facts)
    total = sum(spec.support.values())
    measured = sum(weight for fact, weight in spec.support.items() if fact not in unmeasured)
    raw = sum(item.points for item in support) - sum(item.points for item in counter)
    return round(max(0.0, raw), 4), support, counter, round(measured / total, 4) if total else 1.0


def _contributions(table: dict[Fact, float], facts: Facts) -> tuple[Contribution, ...]:
    return tuple(
        Contribution(fact=fact, weight=weight, strength=facts[fact].strength, evidence_ids=facts[fact].evidence_ids)
        for fact, weight in table.items()
        if fact in facts
    )


def _ids(contributions: tuple[Contribution, ...]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for contribution in contributions:
        seen.update(dict.fromkeys(contribution.evidence_ids))
    return tuple(seen)
