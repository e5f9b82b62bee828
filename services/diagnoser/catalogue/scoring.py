"""Score every hypothesis of the catalogue from the facts and rank them, best first."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from services.diagnoser.catalogue.facts import Fact, Facts
from services.diagnoser.catalogue.hypotheses import CATALOGUE, UNKNOWN, HypothesisSpec


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
    name: str
    location: str | None
    description: str
    score: float
    support: tuple[Contribution, ...]
    counter: tuple[Contribution, ...]

    @property
    def supporting_evidence_ids(self) -> tuple[str, ...]:
        return _ids(self.support)

    @property
    def counter_evidence_ids(self) -> tuple[str, ...]:
        return _ids(self.counter)


def rank_hypotheses(facts: Facts, catalogue: tuple[HypothesisSpec, ...] = CATALOGUE) -> list[ScoredHypothesis]:
    """Every hypothesis scored, plus ``unknown`` (1 - the best score); ties keep the catalogue's order."""
    scored = [_score(spec, facts) for spec in catalogue]
    best = max((item[0] for item in scored), default=0.0)
    entries = [
        (score, index, spec.name, spec.location, spec.description, support, counter)
        for index, (spec, (score, support, counter)) in enumerate(zip(catalogue, scored, strict=True))
    ]
    entries.append((round(1.0 - best, 4), len(entries), UNKNOWN, None, "no hypothesis is supported", (), ()))
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
        )
        for rank, (score, _, name, location, description, support, counter) in enumerate(entries, start=1)
    ]


def _score(spec: HypothesisSpec, facts: Facts) -> tuple[float, tuple[Contribution, ...], tuple[Contribution, ...]]:
    support = _contributions(spec.support, facts)
    counter = _contributions(spec.counter, facts)
    raw = sum(item.points for item in support) - sum(item.points for item in counter)
    return round(min(1.0, max(0.0, raw)), 4), support, counter


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
