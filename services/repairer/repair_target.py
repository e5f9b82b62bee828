"""Read what a repair needs from a diagnosis outcome given as data (the repairer never imports the
diagnoser: it reads what the diagnosis phase published).

Accepted shapes: the ``DiagnosisCompleted`` / ``DiagnosisAbstained`` event payloads (``hypothesis``,
``confidence``, ``report.suspect``, ``report.repair_hints``, ``report.context_summary``, ``reason``) and the
diagnoser's diagnosis outcome dump (``decision``, ``chosen_hypothesis``, ``confidence``, ``suspected``,
``repair_hints``, ``abstention_reason``). Both carry the evidence; the formatted values the diagnosis saw in
each numeric column arriving as text are read from it (``SOURCE_TYPES``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from contracts.common import AssetOwners
from contracts.events.diagnosis import ContextSummary, RepairHints, Suspect
from services.repairer.outcome_owners import owners_to_tell, urns_to_notify

SOURCE_TYPES = "data.source_types"
"""The diagnosis's evidence of numeric columns arriving as text: ``values.retyped.<column>.examples``."""


class RepairTarget(BaseModel):
    """A named cause: the hypothesis, where the diagnosis points, its hints, and who to tell."""

    model_config = ConfigDict(frozen=True)

    hypothesis: str
    confidence: float | None
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
    hypothesis: str | None = None


def read_repair_target(outcome: Mapping[str, Any] | BaseModel) -> RepairTarget | NoRepairTarget:
    data = outcome.model_dump(mode="json") if isinstance(outcome, BaseModel) else dict(outcome)
    hypothesis = data.get("chosen_hypothesis") or data.get("hypothesis")
    if data.get("decision") == "abstained" or not hypothesis:
        reason = data.get("abstention_reason") or data.get("reason") or "no hypothesis was chosen"
        return NoRepairTarget(reason_code="diagnosis_abstained", reason=f"the diagnosis abstained: {reason}")
    report = data.get("report") or {}
    suspected = data.get("suspected") or report.get("suspect") or {}
    confidence = data.get("confidence")
    summary = ContextSummary.model_validate(data.get("context_summary") or report.get("context_summary") or {})
    owners = owners_to_tell(summary, [str(hypothesis)])
    return RepairTarget(
        hypothesis=str(hypothesis),
        confidence=float(confidence) if confidence is not None else None,
        suspect=_suspect(suspected),
        hints=RepairHints.model_validate(data.get("repair_hints") or report.get("repair_hints") or {}),
        owners=tuple(owners),
        owner_urns=tuple(urns_to_notify(summary, owners)),
        number_examples=_number_examples(data.get("evidence") or report.get("evidence") or []),
    )


def _suspect(suspected: Mapping[str, Any]) -> Suspect | None:
    file, function = suspected.get("file"), suspected.get("function")
    if not file or not function:
        return None
    return Suspect(file=str(file), function=str(function), divisor=suspected.get("divisor"))


def _number_examples(evidence: Any) -> dict[str, tuple[str, ...]]:
    for item in evidence if isinstance(evidence, list | tuple) else []:
        if isinstance(item, Mapping) and item.get("kind") == SOURCE_TYPES:
            retyped = (item.get("values") or {}).get("retyped") or {}
            return {
                str(column): tuple(str(value) for value in figures.get("examples") or [])
                for column, figures in retyped.items()
                if isinstance(figures, Mapping)
            }
    return {}
