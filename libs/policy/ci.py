"""The central policy's ``ci`` section: which outcome passes the model's CI job and which fails it.

Read by the detector's verdict (so the GitHub Action follows it) and by `modelguard investigate --ci`. Every
outcome of docs/scenarios.md has a key; an unknown key is refused, a missing one keeps its default.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from contracts.outcomes import Outcome

CiResult = Literal["pass", "fail"]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CiOutcomes(_Strict):
    """One key per outcome of a run (``contracts.outcomes.RUN_OUTCOMES``); by default only a passed gate passes."""

    gate_passed: CiResult = "pass"
    repair_validated: CiResult = "fail"
    """A validated repair is still a regression of the pull request as it stands: a person applies the fix."""
    repair_withheld: CiResult = "fail"
    validation_failed: CiResult = "fail"
    no_code_repair: CiResult = "fail"
    abstained: CiResult = "fail"
    environment_failed: CiResult = "fail"
    """The environment a revision declares could not be built: nothing was evaluated."""


class CiPolicy(_Strict):
    outcomes: CiOutcomes = CiOutcomes()

    def result_for(self, outcome: Outcome) -> CiResult:
        """The CI result of an outcome; one this policy does not name fails the job (fail closed)."""
        if outcome not in CiOutcomes.model_fields:
            return "fail"
        result: CiResult = getattr(self.outcomes, outcome)
        return result
