"""One trial: a tree evaluated on a data window, and what came of it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from libs.workspace.data_windows import DataWindow
from libs.workspace.scored_rows import ScoredRows


@dataclass(frozen=True)
class Trial:
    name: str
    """What the trial measures, for the report: ``base_on_incident``, ``changes 1,3 on the incident window``."""
    tree: Path
    window: DataWindow


@dataclass(frozen=True, eq=False)
class TrialOutcome:
    name: str
    metric: float | None
    """The gate metric, or None when the evaluation failed or the budget was spent."""
    failure: str | None
    scored: ScoredRows | None
    seconds: float
    cached: bool
    content_digest: str
    """sha256 of the tree's files and the window's two files: what the result depends on."""

    @property
    def measured(self) -> bool:
        return self.metric is not None


BUDGET_SPENT = "not run: the diagnosis's evaluation budget (diagnosis.max_evaluations) is spent"
