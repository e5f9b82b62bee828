"""The decision: name the top hypothesis only when there is a regression, the drop clearly follows one side
(code or data), the top hypothesis is that side's, scores at least ``abstain_below`` and leads the runner-up
by at least ``min_margin``; otherwise abstain and say which test failed."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from contracts.catalogue import CauseLocation, Hypothesis
from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.catalogue.facts import Fact, Facts
from services.diagnoser.catalogue.scoring import ScoredHypothesis

RECOVERY_FACTS = {
    "schema": Fact.RECOVERED_BY_SCHEMA,
    "type": Fact.RECOVERED_BY_TYPE,
    "category": Fact.RECOVERED_BY_CATEGORY,
    "quality": Fact.RECOVERED_BY_QUALITY,
    "drift": Fact.RECOVERED_BY_DRIFT,
    "label": Fact.RECOVERED_BY_LABEL,
}


def _split_data_recovery(facts: Facts, thresholds: DiagnosisPolicy) -> str | None:
    """Two faults in the data: the best intervention wins back less than ``dominant_share`` of the loss and
    another kind of fault wins back at least the rest of it (the label mix does not count when the inputs
    moved within each label group). Naming either would hide the other."""
    recovered = {kind: facts[fact].strength for kind, fact in RECOVERY_FACTS.items() if fact in facts}
    if Fact.INPUTS_MOVED_BEYOND_LABEL_MIX in facts:
        recovered.pop("label", None)
    ranked = sorted(recovered.items(), key=lambda item: -item[1])
    if len(ranked) < 2:
        return None
    (first, best), (second, next_best) = ranked[0], ranked[1]
    if best < thresholds.dominant_share and next_best >= 1 - thresholds.dominant_share:
        return (
            f"two faults in the data each win back part of the loss: {first} {best:.0%}, {second} {next_best:.0%}; "
            f"neither reaches the policy's dominant_share {thresholds.dominant_share:.0%}"
        )
    return None


AbstentionCode = Literal[
    "no_regression", "mixed_cause", "nothing_supported", "below_threshold", "insufficient_margin", "location_mismatch"
]


class Decision(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Literal["diagnosed", "abstained"]
    hypothesis: Hypothesis | None
    score: float | None
    margin: float | None
    cause_location: CauseLocation
    reason_code: AbstentionCode | None = None
    reason: str | None = None


def cause_location(facts: Facts, thresholds: DiagnosisPolicy) -> CauseLocation:
    code = facts.get(Fact.DROP_FOLLOWS_CODE)
    data = facts.get(Fact.DROP_FOLLOWS_DATA)
    if code is None and data is None:
        return CauseLocation.UNKNOWN
    if code is not None and code.strength >= thresholds.dominant_share:
        return CauseLocation.CODE
    if data is not None and data.strength >= thresholds.dominant_share:
        return CauseLocation.DATA
    return CauseLocation.MIXED


def decide(ranked: list[ScoredHypothesis], facts: Facts, thresholds: DiagnosisPolicy) -> Decision:
    location = cause_location(facts, thresholds)
    top = ranked[0]
    runner_up = ranked[1] if len(ranked) > 1 else None
    margin = round(top.score - (runner_up.score if runner_up else 0.0), 4)

    def abstain(code: AbstentionCode, reason: str) -> Decision:
        return Decision(
            decision="abstained",
            hypothesis=None,
            score=top.score,
            margin=margin,
            cause_location=location,
            reason_code=code,
            reason=reason,
        )

    if Fact.NO_REGRESSION in facts:
        return abstain("no_regression", "the candidate is within the gate's tolerance of the baseline")
    if location == CauseLocation.MIXED:
        code, data = facts.get(Fact.DROP_FOLLOWS_CODE), facts.get(Fact.DROP_FOLLOWS_DATA)
        return abstain(
            "mixed_cause",
            f"the drop follows both the code ({code.strength if code else 0:.0%}) and the data "
            f"({data.strength if data else 0:.0%}); neither reaches the policy's dominant_share "
            f"{thresholds.dominant_share:.0%}",
        )
    split = _split_data_recovery(facts, thresholds) if top.location == CauseLocation.DATA else None
    if split is not None:
        return abstain("mixed_cause", split)
    if top.name == Hypothesis.UNKNOWN:
        return abstain("nothing_supported", f"no hypothesis is supported (best named score {1 - top.score:.2f})")
    if top.score < thresholds.abstain_below:
        return abstain(
            "below_threshold",
            f"top hypothesis {top.name} scores {top.score:.2f}, below the policy's abstain_below "
            f"{thresholds.abstain_below:.2f}",
        )
    if runner_up is not None and margin < thresholds.min_margin:
        return abstain(
            "insufficient_margin",
            f"top hypothesis {top.name} ({top.score:.2f}) leads {runner_up.name} ({runner_up.score:.2f}) by "
            f"{margin:.2f}, less than the policy's min_margin {thresholds.min_margin:.2f}",
        )
    if location in (CauseLocation.CODE, CauseLocation.DATA) and top.location != location:
        return abstain(
            "location_mismatch",
            f"top hypothesis {top.name} puts the cause in the {top.location}, the drop follows the {location}",
        )
    return Decision(
        decision="diagnosed",
        hypothesis=top.name,
        score=top.score,
        margin=margin,
        cause_location=location,
    )
