"""One incident, read from its verified events: the timeline, the gate, the diagnosis and its evaluation runs,
the lineage, the patch, the validation, the publications and the attestation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contracts.common import GateResult
from contracts.context_snapshot import ContextSnapshot
from contracts.events.context import ContextCollected, UpstreamRiskDetected
from contracts.events.diagnosis import DiagnosisReport
from contracts.events.publication import Published
from contracts.events.repair import PatchSummary
from contracts.events.validation import ValidationReport
from libs.artifacts.store import ArtifactCorrupted, ArtifactNotFound, ArtifactStoreUnavailable
from libs.ledger import IncidentProjection, LedgerRow, project, verify_checkpoints, verify_incident
from modelguard.attestation_check import check_attestation
from modelguard.console.counterfactual_chart import Chart, counterfactual_chart
from modelguard.console.diff_lines import DiffLine, diff_lines
from modelguard.console.evidence_view import HypothesisView, ranked_hypotheses
from modelguard.console.graph_layout import Layout, LayoutUnavailable, layout
from modelguard.console.ledger_source import ConsoleLedger
from modelguard.console.lineage import LineageGraph, regression_lineage, risk_lineage
from modelguard.console.timeline import TimelineEntry, timeline


@dataclass(frozen=True)
class AttestationView:
    digest: str
    ok: bool
    lines: list[str]


@dataclass(frozen=True)
class LineageView:
    graph: LineageGraph
    layout: Layout | None
    unavailable: str | None


@dataclass
class IncidentView:
    projection: IncidentProjection
    timeline: list[TimelineEntry]
    gate: GateResult | None = None
    report: DiagnosisReport | None = None
    hypotheses: list[HypothesisView] = field(default_factory=list)
    chart: Chart | None = None
    risk: UpstreamRiskDetected | None = None
    lineage: LineageView | None = None
    patch: PatchSummary | None = None
    diff: list[DiffLine] = field(default_factory=list)
    validation: ValidationReport | None = None
    published: list[Published] = field(default_factory=list)
    attestations: list[AttestationView] = field(default_factory=list)
    withheld: str | None = None

    @property
    def verified(self) -> bool:
        return all(entry.verified for entry in self.timeline)

    @property
    def failed(self) -> int:
        """Events a check failed on (a pending checkpoint is not a failure)."""
        return sum(entry.failed for entry in self.timeline)

    @property
    def pending(self) -> int:
        return sum(entry.checkpoint.state == "pending" for entry in self.timeline)


def incident_view(ledger: ConsoleLedger, incident_id: str, rows: Sequence[LedgerRow]) -> IncidentView:
    """The projection is folded from the events whose signatures verify; one that fails is in the timeline only."""
    report = verify_incident(ledger.store, incident_id, ledger.registry)
    entries = timeline(
        rows, ledger.registry, report, ledger.store.checkpoints(), verify_checkpoints(ledger.store, ledger.registry)
    )
    projection = project(e.event for e in entries if e.event is not None).get(incident_id)
    view = IncidentView(projection or IncidentProjection(incident_id=incident_id), entries)
    snapshot: ContextSnapshot | None = None
    for entry in entries:
        if entry.event is None:  # a payload whose signature fails is shown nowhere but in the timeline
            continue
        payload: Any = entry.event.payload
        view.gate = getattr(payload, "gate", None) or view.gate
        view.report = getattr(payload, "report", None) or getattr(payload, "diagnosis", None) or view.report
        view.patch = getattr(payload, "patch", None) or view.patch
        view.validation = getattr(payload, "validation", None) or view.validation
        if isinstance(payload, ContextCollected):
            snapshot = payload.context
        if isinstance(payload, UpstreamRiskDetected):
            view.risk = payload
        if isinstance(payload, Published):
            view.published.append(payload)
        if entry.event.meta.event_type in ("RepairWithheld", "DiagnosisAbstained", "ValidationFailed"):
            view.withheld = payload.reason
    if view.report is not None:
        view.hypotheses = ranked_hypotheses(view.report)
        view.chart = counterfactual_chart(view.report, view.gate)
    if view.patch is not None:
        view.diff = diff_lines(view.patch.diff)
    graph = risk_lineage(view.risk) if view.risk else regression_lineage(snapshot, view.report) if snapshot else None
    if graph is not None and graph.nodes:
        view.lineage = _laid_out(graph)
    attested = {p.attestation.sha256: p for p in view.published if p.attestation is not None}
    view.attestations = [_attestation(ledger, p) for p in attested.values()]
    return view


def _laid_out(graph: LineageGraph) -> LineageView:
    try:
        return LineageView(graph, layout(graph), None)
    except LayoutUnavailable as exc:
        return LineageView(graph, None, str(exc))


def _attestation(ledger: ConsoleLedger, published: Published) -> AttestationView:
    assert published.attestation is not None
    digest = published.attestation.sha256
    try:
        raw = ledger.artifacts().get(published.attestation)
    except (ArtifactNotFound, ArtifactCorrupted, ArtifactStoreUnavailable) as exc:
        return AttestationView(digest, False, [f"not readable from the artifact store: {exc}"])
    checked = check_attestation(raw, f"sha256:{digest[:16]}…", ledger.registry, ledger.store, ledger_required=True)
    return AttestationView(digest, checked.ok, checked.lines)
