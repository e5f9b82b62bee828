"""Diagnose one incident: compute evidence from code, data and metadata, rank hypotheses, decide."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from contracts.context_snapshot import ContextSnapshot
from services.diagnoser.decision import Abstention, Diagnosis, diagnose
from services.diagnoser.evidence import Evidence, EvidenceKind, of_kind
from services.diagnoser.evidence_collection import collect_evidence
from services.diagnoser.hypotheses import RankedHypothesis
from services.diagnoser.metadata_evidence import as_snapshot
from services.diagnoser.workspace_evidence import MetricComparison

SUSPECT_KINDS = (EvidenceKind.UNGUARDED_DIVISION, EvidenceKind.FUNCTION_CHANGED)


class SuspectedLocation(BaseModel):
    model_config = ConfigDict(frozen=True)

    file: str
    function: str | None
    lines: tuple[int, int] | None
    division_line: int | None
    divisor: str | None
    evidence_id: str


class InvalidValueFigures(BaseModel):
    model_config = ConfigDict(frozen=True)

    base: int
    candidate: int
    base_by_column: dict[str, int]
    candidate_by_column: dict[str, int]


class DiagnosisOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Literal["diagnosed", "abstained"]
    chosen_hypothesis: str | None
    confidence: float | None
    confidence_level: str | None
    abstention_reason: str | None
    suspected: SuspectedLocation | None
    suspected_file: str | None
    suspected_function: str | None
    invalid_values: InvalidValueFigures
    source_anomalies: int | None
    source_anomaly_column: str | None
    metric: MetricComparison | None
    changed_files: tuple[str, ...]
    feature_files: tuple[str, ...]
    evidence: tuple[Evidence, ...]
    hypotheses: tuple[RankedHypothesis, ...]
    result: Diagnosis | Abstention = Field(discriminator="decision")


def diagnose_incident(
    base_dir: Path,
    candidate_dir: Path,
    data_csv: Path,
    workspace_spec: Mapping[str, Any],
    diagnosis_policy: Mapping[str, Any],
    context: ContextSnapshot | Mapping[str, Any] | None = None,
    *,
    gate_policy: Mapping[str, Any] | None = None,
    base_data_csv: Path | None = None,
    reported_metrics: Mapping[str, Mapping[str, float]] | None = None,
) -> DiagnosisOutcome:
    """Diagnose why ``candidate_dir`` regressed against ``base_dir``.

    ``data_csv`` is the data the candidate ran on; ``base_data_csv`` the data the baseline ran on (the
    same file when omitted). Both trees' feature code runs on ``data_csv``, so "same rows, different
    code" is measured directly. The metric comparison needs ``gate_policy``; it is taken from
    ``reported_metrics`` (``{"base": {...}, "candidate": {...}}``) when given, else both trees are
    evaluated. Neither tree is modified: command outputs go to a scratch folder.
    """
    collected = collect_evidence(
        Path(base_dir),
        Path(candidate_dir),
        Path(data_csv),
        workspace_spec,
        as_snapshot(context),
        gate_policy=gate_policy,
        base_data_csv=Path(base_data_csv) if base_data_csv is not None else None,
        reported_metrics=reported_metrics,
    )
    evidence = list(collected.evidence)
    result = diagnose(evidence, diagnosis_policy)
    suspected = suspect(result, evidence) if isinstance(result, Diagnosis) else None
    return DiagnosisOutcome(
        decision=result.decision,
        chosen_hypothesis=result.hypothesis if isinstance(result, Diagnosis) else None,
        confidence=result.score if isinstance(result, Diagnosis) else None,
        confidence_level=result.confidence_level if isinstance(result, Diagnosis) else None,
        abstention_reason=result.reason if isinstance(result, Abstention) else None,
        suspected=suspected,
        suspected_file=suspected.file if suspected else None,
        suspected_function=suspected.function if suspected else None,
        invalid_values=InvalidValueFigures(
            base=collected.base_features.invalid_total,
            candidate=collected.candidate_features.invalid_total,
            base_by_column=collected.base_features.invalid_by_column,
            candidate_by_column=collected.candidate_features.invalid_by_column,
        ),
        source_anomalies=collected.source_anomalies.candidate_data_count if collected.source_anomalies else None,
        source_anomaly_column=collected.source_anomalies.column if collected.source_anomalies else None,
        metric=collected.metric,
        changed_files=collected.changed_files,
        feature_files=collected.feature_files,
        evidence=tuple(evidence),
        hypotheses=result.ranked,
        result=result,
    )


def suspect(diagnosis: Diagnosis, evidence: list[Evidence]) -> SuspectedLocation | None:
    """The code location the chosen hypothesis's own supporting evidence points at, most specific first."""
    supporting = [item for item in evidence if item.id in diagnosis.supporting_evidence_ids]
    for kind in SUSPECT_KINDS:
        for item in of_kind(supporting, kind):
            values = item.values
            lines = values.get("lines") or values.get("function_lines")
            return SuspectedLocation(
                file=values["file"],
                function=values.get("function"),
                lines=tuple(lines) if lines else None,
                division_line=values.get("line") if kind == EvidenceKind.UNGUARDED_DIVISION else None,
                divisor=values.get("divisor"),
                evidence_id=item.id,
            )
    return None
