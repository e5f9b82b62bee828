"""The diagnosis decision: name a cause only when the evidence is strong and clearly ahead, else abstain."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from services.diagnoser.evidence import Evidence
from services.diagnoser.hypotheses import ConfidenceLevel, RankedHypothesis, rank_hypotheses

AbstentionReason = Literal["no_hypotheses", "below_threshold", "insufficient_margin"]


class DiagnosisThresholds(BaseModel):
    """The policy's ``diagnosis`` section."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    abstain_below: float
    min_margin: float


class Diagnosis(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Literal["diagnosed"] = "diagnosed"
    hypothesis: str
    score: float
    confidence_level: ConfidenceLevel
    margin: float
    thresholds: DiagnosisThresholds
    supporting_evidence_ids: tuple[str, ...]
    counter_evidence_ids: tuple[str, ...]
    ranked: tuple[RankedHypothesis, ...]


class Abstention(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Literal["abstained"] = "abstained"
    reason_code: AbstentionReason
    reason: str
    top_hypothesis: str | None
    top_score: float | None
    margin: float | None
    thresholds: DiagnosisThresholds
    ranked: tuple[RankedHypothesis, ...]


def diagnose(evidence: list[Evidence], policy_diagnosis: Mapping[str, Any]) -> Diagnosis | Abstention:
    """Rank the hypotheses on ``evidence`` and decide, following the policy's ``diagnosis`` section."""
    return decide(rank_hypotheses(evidence), DiagnosisThresholds.model_validate(policy_diagnosis))


def decide(ranked: list[RankedHypothesis], thresholds: DiagnosisThresholds) -> Diagnosis | Abstention:
    if not ranked:
        return Abstention(
            reason_code="no_hypotheses",
            reason="no hypothesis could be scored",
            top_hypothesis=None,
            top_score=None,
            margin=None,
            thresholds=thresholds,
            ranked=(),
        )
    top = ranked[0]
    second_score = ranked[1].score if len(ranked) > 1 else 0.0
    margin = round(top.score - second_score, 4)
    if top.score < thresholds.abstain_below:
        return _abstain(
            "below_threshold",
            f"top hypothesis {top.name} scores {top.score:.4f}, below the policy's "
            f"abstain_below {thresholds.abstain_below:.4f}",
            ranked,
            margin,
            thresholds,
        )
    if margin < thresholds.min_margin:
        return _abstain(
            "insufficient_margin",
            f"top hypothesis {top.name} ({top.score:.4f}) leads {ranked[1].name} ({second_score:.4f}) by "
            f"{margin:.4f}, less than the policy's min_margin {thresholds.min_margin:.4f}",
            ranked,
            margin,
            thresholds,
        )
    return Diagnosis(
        hypothesis=top.name,
        score=top.score,
        confidence_level=top.confidence_level,
        margin=margin,
        thresholds=thresholds,
        supporting_evidence_ids=top.supporting_evidence_ids,
        counter_evidence_ids=top.counter_evidence_ids,
        ranked=tuple(ranked),
    )


def _abstain(
    code: AbstentionReason,
    reason: str,
    ranked: list[RankedHypothesis],
    margin: float,
    thresholds: DiagnosisThresholds,
) -> Abstention:
    return Abstention(
        reason_code=code,
        reason=reason,
        top_hypothesis=ranked[0].name,
        top_score=ranked[0].score,
        margin=margin,
        thresholds=thresholds,
        ranked=tuple(ranked),
    )
