"""Read what a repair needs from the diagnosis the diagnoser published (the repairer never imports the
diagnoser): a ``DiagnosisCompleted`` names the hypothesis, its confidence, and the report's suspect, repair
hints, context summary and evidence; a ``DiagnosisAbstained`` names no cause. The formatted values the diagnosis
saw in each numeric column arriving as text are read from the evidence (``SOURCE_TYPES``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from contracts.catalogue import Hypothesis
from contracts.common import AssetOwners
from contracts.events.diagnosis import DiagnosisAbstained, DiagnosisCompleted, EvidenceItem, RepairHints, Suspect
from services.repairer.outcome_owners import owners_to_tell, urns_to_notify

SOURCE_TYPES = "data.source_types"
"""The diagnosis's evidence of numeric columns arriving as text: ``values.retyped.<column>.examples``."""


class RepairTarget(BaseModel):
    """A named cause: the hypothesis, where the diagnosis points, its hints, and who to tell."""

    model_config = ConfigDict(frozen=True)

    hypothesis: Hypothesis
    confidence: float
    suspect: Suspect | None = None
    hints: RepairHints = RepairHints()
    owners: tuple[AssetOwners, ...] = ()
    """Who to tell, per affected asset (``outcome_owners``): for a cause in the data its datasets, then the model."""
    owner_urns: tuple[str, ...] = ()
    """The owners' urns, each once, in that order."""
    number_examples: dict[str, tuple[str, ...]] = {}
    """Per numeric column arriving as text, formatted values the diagnosis saw in it."""


class NoRepairTarget(BaseModel):
    model_config = ConfigDict(frozen=True)

    reason_code: Literal["diagnosis_abstained"]
    reason: str
    hypothesis: Hypothesis | None = None


def read_repair_target(diagnosis: DiagnosisCompleted | DiagnosisAbstained) -> RepairTarget | NoRepairTarget:
    if isinstance(diagnosis, DiagnosisAbstained):
        reason = diagnosis.reason or "no hypothesis was chosen"
        return NoRepairTarget(reason_code="diagnosis_abstained", reason=f"the diagnosis abstained: {reason}")
    report = diagnosis.report
    owners = owners_to_tell(report.context_summary, [diagnosis.hypothesis])
    return RepairTarget(
        hypothesis=diagnosis.hypothesis,
        confidence=diagnosis.confidence,
        suspect=_suspect(report.suspect),
        hints=report.repair_hints,
        owners=tuple(owners),
        owner_urns=tuple(urns_to_notify(report.context_summary, owners)),
        number_examples=_number_examples(report.evidence),
    )


def _suspect(suspect: Suspect | None) -> Suspect | None:
    """The suspect a strategy can edit: one naming both a file and a function."""
    return suspect if suspect is not None and suspect.file and suspect.function else None


def _number_examples(evidence: Sequence[EvidenceItem]) -> dict[str, tuple[str, ...]]:
    for item in evidence:
        if item.kind == SOURCE_TYPES:
            retyped = item.values.get("retyped") or {}
            return {
                str(column): tuple(str(value) for value in figures.get("examples") or [])
                for column, figures in retyped.items()
                if isinstance(figures, Mapping)
            }
    return {}
