"""Read what a repair needs from a diagnosis outcome given as a dict (the repairer never imports the
diagnoser: it reads the data the diagnosis phase published).

Accepted shapes: the diagnoser's ``DiagnosisOutcome`` dump (``decision``, ``chosen_hypothesis``,
``confidence``, ``suspected {file, function, divisor}``, ``abstention_reason``) and the
``DiagnosisCompleted`` / ``DiagnosisAbstained`` event payloads (``hypothesis``, ``confidence``,
``report.suspect {file, function}``, ``reason``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class RepairTarget(BaseModel):
    model_config = ConfigDict(frozen=True)

    hypothesis: str
    confidence: float | None
    file: str
    function: str
    divisor: str | None = None


class NoRepairTarget(BaseModel):
    model_config = ConfigDict(frozen=True)

    reason_code: Literal["diagnosis_abstained", "no_target"]
    reason: str
    hypothesis: str | None = None


def read_repair_target(outcome: Mapping[str, Any] | BaseModel) -> RepairTarget | NoRepairTarget:
    data = outcome.model_dump(mode="json") if isinstance(outcome, BaseModel) else dict(outcome)
    hypothesis = data.get("chosen_hypothesis") or data.get("hypothesis")
    if data.get("decision") == "abstained" or not hypothesis:
        reason = data.get("abstention_reason") or data.get("reason") or "no hypothesis was chosen"
        return NoRepairTarget(reason_code="diagnosis_abstained", reason=f"the diagnosis abstained: {reason}")
    suspected = data.get("suspected") or (data.get("report") or {}).get("suspect") or {}
    file, function = suspected.get("file"), suspected.get("function")
    if not file or not function:
        return NoRepairTarget(
            reason_code="no_target",
            reason=f"the diagnosis ({hypothesis}) names no file and function to repair",
            hypothesis=hypothesis,
        )
    confidence = data.get("confidence")
    return RepairTarget(
        hypothesis=str(hypothesis),
        confidence=float(confidence) if confidence is not None else None,
        file=str(file),
        function=str(function),
        divisor=suspected.get("divisor"),
    )
