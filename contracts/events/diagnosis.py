"""Events of the diagnosis phase: ranked hypotheses on computed evidence, or an abstention."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from contracts.catalogue import CauseLocation, Hypothesis
from contracts.common import AssetOwners, Frozen, IncidentState


class EvidenceItem(Frozen):
    evidence_id: str
    kind: str
    summary: str
    values: dict[str, Any] = Field(default_factory=dict)
    source: str
    strength: float | None = Field(default=None, ge=0, le=1, description="how strongly it shows what it measures")
    method: str | None = Field(default=None, description="how the figures were computed")


class RankedHypothesis(Frozen):
    name: Hypothesis
    score: float = Field(ge=0, le=1)
    confidence: str
    supporting: list[str]
    counter: list[str]
    explanation: str
    measured_share: float | None = Field(
        default=None, ge=0, le=1, description="share of the hypothesis's support weight that could be measured"
    )


class Suspect(Frozen):
    file: str
    function: str
    divisor: str | None = None


class ColumnRename(Frozen):
    old: str
    new: str


class LineSpan(Frozen):
    """One hunk of an edit: base lines [base_start, base_end) became candidate lines [candidate_start,
    candidate_end) (0-based, end excluded; an empty range is a pure insertion or deletion)."""

    base_start: int = Field(ge=0)
    base_end: int = Field(ge=0)
    candidate_start: int = Field(ge=0)
    candidate_end: int = Field(ge=0)


class ChangeRef(Frozen):
    """One unit of the candidate's change that carries the drop (change isolation): a file and, for an edit,
    the definitions it touches and its hunks."""

    path: str
    kind: str = Field(description="edit, file_added, file_removed or file_replaced")
    anchors: list[str] = Field(default_factory=list, description="functions, methods or statements it touches")
    hunks: list[LineSpan] = Field(default_factory=list)


class GeneratedFileRef(Frozen):
    path: str
    reason: str = Field(description="how it was recognised as generated: a header, .gitattributes, a policy glob")
    generator: str | None = None


class ExperimentRun(Frozen):
    """One evaluation the diagnosis ran (or reused from its cache): what it measured and what it gave. No
    timings: the report is recomputed by audits and compared by digest."""

    name: str
    metric: float | None
    cached: bool
    failure: str | None = None
    content_digest: str = Field(description="sha256 of the tree's files and the window's two files")


class RepairHints(Frozen):
    """What a repair strategy needs to know about the named cause, computed by the diagnosis.

    Each list is empty when the diagnosis found nothing of that kind; a strategy refuses without its hint.
    """

    changed_functions: list[Suspect] = Field(
        default_factory=list, description="functions the candidate changed on the cause's path (revert_change)"
    )
    renamed_columns: list[ColumnRename] = Field(
        default_factory=list, description="source columns renamed upstream (column_rename)"
    )
    text_numeric_columns: list[str] = Field(
        default_factory=list, description="numeric columns that arrive as formatted text (numeric_coercion)"
    )
    unseen_categories: dict[str, list[str]] = Field(
        default_factory=dict, description="column -> values unseen in the approval window (unseen_category)"
    )
    null_columns: list[str] = Field(default_factory=list, description="columns whose nulls rose (null_guard)")
    read_columns: list[str] = Field(default_factory=list, description="source columns the model's code reads")
    isolated_changes: list[ChangeRef] = Field(
        default_factory=list, description="the smallest part of the change that carries the drop (revert_change)"
    )
    generated_files: list[GeneratedFileRef] = Field(
        default_factory=list, description="changed files on the cause's path that are generated code (never edited)"
    )


class DeploymentRef(Frozen):
    urn: str
    status: str | None = None


class ContextSummary(Frozen):
    """What people-facing phases need from the DataHub context, carried so they need not fetch it again."""

    model_owners: list[str] = Field(default_factory=list)
    deployments: list[DeploymentRef] = Field(default_factory=list)
    upstream_datasets: list[str] = Field(default_factory=list)
    upstream_owners: list[str] = Field(default_factory=list, description="owners of the upstream datasets")
    provider: str | None = None
    model_ownership: AssetOwners | None = Field(
        default=None, description="the model with the owners DataHub records for it (since 1.1)"
    )
    dataset_ownership: list[AssetOwners] = Field(
        default_factory=list,
        description="every dataset on the model's upstream lineage with its owners, most upstream first (since 1.1)",
    )
    cause_datasets: list[str] = Field(
        default_factory=list,
        description="the upstream datasets a cause in the data lies in: those whose schema holds a column the "
        "diagnosis names as faulty (renamed, numeric as text, unseen categories, risen nulls), else the lineage's "
        "source datasets; most upstream first (since 1.1)",
    )


class DiagnosisReport(Frozen):
    evidence: list[EvidenceItem]
    hypotheses: list[RankedHypothesis]
    invalid_values: dict[str, int] = Field(description="invalid feature values on base and candidate")
    suspect: Suspect | None
    repair_hints: RepairHints = Field(default_factory=RepairHints)
    counterfactual: dict[str, float | None] = Field(
        default_factory=dict, description="the gate metric per (revision, window): base_on_approval, ..."
    )
    cause_location: CauseLocation | None = Field(default=None, description='"code" or "data" for the named cause')
    context_digest: str
    markdown: str = Field(default="", description="the report for a reviewer: verdict, evidence, runners-up")
    context_summary: ContextSummary = Field(default_factory=ContextSummary)
    runs: list[ExperimentRun] = Field(default_factory=list, description="every evaluation the diagnosis ran")
    evaluations: int | None = Field(default=None, ge=0, description="evaluations executed (cache hits excluded)")
    metric_source: str | None = Field(
        default=None, description='"referee" (ModelGuard computed the metric) or "self_reported"'
    )


class DiagnosisCompleted(IncidentState):
    report: DiagnosisReport
    hypothesis: Hypothesis
    confidence: float = Field(ge=0, le=1)


class DiagnosisAbstained(IncidentState):
    report: DiagnosisReport
    reason: str
