"""The repair catalogue: each named strategy, the diagnoses it may answer, and how it edits a source file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from services.repairer.repair_target import RepairTarget
from services.repairer.strategies import guarded_division
from services.repairer.strategies.outcome import SourceEdit, StrategyRefusal

StrategyEdit = Callable[[str, RepairTarget], SourceEdit | StrategyRefusal]


@dataclass(frozen=True)
class RepairStrategy:
    name: str
    answers: frozenset[str]
    """Hypothesis names this strategy is a defensible repair for."""
    edit: StrategyEdit


def _guarded_division(source: str, target: RepairTarget) -> SourceEdit | StrategyRefusal:
    return guarded_division.guard_division(source, target.file, target.function, target.divisor)


CATALOGUE: dict[str, RepairStrategy] = {
    guarded_division.STRATEGY: RepairStrategy(
        name=guarded_division.STRATEGY,
        answers=frozenset({"feature_transformation"}),
        edit=_guarded_division,
    ),
}
