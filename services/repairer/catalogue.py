"""The repair catalogue: each named strategy, the hypotheses it answers, what it needs, and which strategies
(in order) answer each hypothesis; hypotheses whose cause is in the data get no code repair of their own.

A need is either evidence from the diagnosis (a suspect, a base revision, a repair hint) or a declaration of
the workspace config (a default category, a null fill). Without the evidence a strategy refuses; without
the declaration no code repair is defensible at all: a person has not said what the code should do with
the data, so the owners are told instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, cast

from contracts.catalogue import LOCATION, REPAIRS, CauseLocation, Hypothesis, RepairStrategy
from services.repairer.repair_context import RepairContext
from services.repairer.strategies import (
    column_rename,
    guarded_division,
    null_guard,
    numeric_coercion,
    revert_change,
    unseen_category,
)
from services.repairer.strategies.outcome import MultiFileEdit, StrategyRefusal

Need = Literal[
    "suspect",
    "base_tree",
    "changed_code",
    "renamed_columns",
    "text_numeric_columns",
    "unseen_categories",
    "categorical_default",
    "null_columns",
    "null_fill",
]
Propose = Callable[[RepairContext], MultiFileEdit | StrategyRefusal]

DECLARATIONS: frozenset[Need] = frozenset({"categorical_default", "null_fill"})
NEED_MET: dict[Need, Callable[[RepairContext], bool]] = {
    "suspect": lambda c: c.suspect is not None,
    "base_tree": lambda c: c.base is not None,
    "changed_code": lambda c: bool(c.hints.isolated_changes or c.hints.changed_functions) or c.suspect is not None,
    "renamed_columns": lambda c: bool(c.hints.renamed_columns),
    "text_numeric_columns": lambda c: bool(c.hints.text_numeric_columns),
    "unseen_categories": lambda c: bool(c.hints.unseen_categories),
    "categorical_default": lambda c: any(col in c.categorical_defaults for col in c.hints.unseen_categories),
    "null_columns": lambda c: bool(c.hints.null_columns),
    "null_fill": lambda c: any(col in c.null_fills for col in c.hints.null_columns),
}
NEED_DESCRIPTION: dict[Need, str] = {
    "suspect": "the diagnosis names no suspect function",
    "base_tree": "the base revision is not available",
    "changed_code": "the diagnosis names no changed function",
    "renamed_columns": "the diagnosis names no renamed column",
    "text_numeric_columns": "the diagnosis names no numeric column arriving as text",
    "unseen_categories": "the diagnosis names no column with unseen categories",
    "categorical_default": "the workspace config declares no default category for the columns with unseen values",
    "null_columns": "the diagnosis names no column whose nulls rose",
    "null_fill": "the workspace config declares no fill for the columns whose nulls rose",
}


@dataclass(frozen=True)
class StrategyEntry:
    name: RepairStrategy
    answers: frozenset[Hypothesis]
    """The hypotheses this strategy is a defensible repair for."""
    needs: tuple[Need, ...]
    propose: Propose

    def missing(self, context: RepairContext) -> list[Need]:
        return [need for need in self.needs if not NEED_MET[need](context)]


class StrategyModule(Protocol):
    """What a module of ``services.repairer.strategies`` declares to be in the catalogue."""

    STRATEGY: RepairStrategy
    ANSWERS: frozenset[Hypothesis]
    NEEDS: tuple[str, ...]

    def propose(self, context: RepairContext) -> MultiFileEdit | StrategyRefusal: ...


def _entry(module: StrategyModule) -> StrategyEntry:
    unknown = set(module.NEEDS) - set(NEED_MET)
    if unknown:
        raise ValueError(f"{module.STRATEGY} declares unknown needs {sorted(unknown)}")
    needs = cast(tuple[Need, ...], module.NEEDS)
    return StrategyEntry(name=module.STRATEGY, answers=module.ANSWERS, needs=needs, propose=module.propose)


CATALOGUE: dict[RepairStrategy, StrategyEntry] = {  # every strategy of contracts.catalogue, each with its module
    strategy.name: strategy
    for strategy in map(
        _entry,
        (guarded_division, revert_change, column_rename, numeric_coercion, unseen_category, null_guard),
    )
}

REPAIRS_BY_HYPOTHESIS: dict[Hypothesis, tuple[RepairStrategy, ...]] = REPAIRS
"""Strategies to try, in order, for each hypothesis (contracts.catalogue); a hypothesis not listed gets no code
repair."""

CAUSE_IN_DATA: frozenset[Hypothesis] = frozenset(
    hypothesis for hypothesis, location in LOCATION.items() if location == CauseLocation.DATA
)
"""Hypotheses whose cause is in the data: without a declared code repair, the owners are told instead."""

assert all(
    hypothesis in CATALOGUE[name].answers for hypothesis, names in REPAIRS_BY_HYPOTHESIS.items() for name in names
)
