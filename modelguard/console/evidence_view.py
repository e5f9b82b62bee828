"""The ranked hypotheses of a diagnosis, each with the evidence items that supported it and those that
falsified it (looked up by evidence id in the same report)."""

from __future__ import annotations

from dataclasses import dataclass

from contracts.events.diagnosis import DiagnosisReport, EvidenceItem, RankedHypothesis


@dataclass(frozen=True)
class HypothesisView:
    rank: int
    hypothesis: RankedHypothesis
    supporting: list[EvidenceItem]
    falsifying: list[EvidenceItem]
    unknown_ids: list[str]
    """Evidence ids the hypothesis names that the report does not hold."""


def ranked_hypotheses(report: DiagnosisReport) -> list[HypothesisView]:
    by_id = {item.evidence_id: item for item in report.evidence}
    views = []
    for rank, hypothesis in enumerate(report.hypotheses, start=1):
        named = [*hypothesis.supporting, *hypothesis.counter]
        views.append(
            HypothesisView(
                rank=rank,
                hypothesis=hypothesis,
                supporting=[by_id[i] for i in hypothesis.supporting if i in by_id],
                falsifying=[by_id[i] for i in hypothesis.counter if i in by_id],
                unknown_ids=[i for i in named if i not in by_id],
            )
        )
    return views
