"""The pull-request comment, in markdown. Deterministic: the same finding renders the same bytes.

The content (without the hidden marker) is also the DataHub incident's description and the check run's text.
"""

from __future__ import annotations

from contracts.events.context import UpstreamRiskDetected
from contracts.events.diagnosis import DiagnosisReport
from contracts.events.repair import RepairWithheld
from contracts.events.validation import RepairValidated, ValidationFailed
from contracts.outcomes import Outcome, PublishedOutcome
from services.publisher.finding import Finding
from services.publisher.github_documents import CommentDocument
from services.publisher.publication_links import PublicationLinks, with_footer
from services.publisher.render_owners import owner_lines

HEADLINES: dict[PublishedOutcome, str] = {
    Outcome.REPAIR_VALIDATED: "A validated repair is proposed for review",
    Outcome.VALIDATION_FAILED: "A repair was tried and did not pass validation",
    Outcome.REPAIR_WITHHELD: "No repair is proposed",
    Outcome.UPSTREAM_RISK: "An upstream change puts this model at risk",
}


def _evidence_lines(report: DiagnosisReport) -> list[str]:
    """The leading hypothesis's computed evidence, for and against, in the diagnoser's own words."""
    if not report.hypotheses:
        return []
    top = report.hypotheses[0]
    summaries = {e.evidence_id: e.summary for e in report.evidence}
    lines = [f"Evidence for `{top.name}`:"]
    lines += [f"- {summaries[i]}" for i in top.supporting if i in summaries] or ["- none"]
    lines += [f"Against `{top.name}`:"]
    lines += [f"- {summaries[i]}" for i in top.counter if i in summaries] or ["- none"]
    return [*lines, ""]


def comment_marker(incident_id: str) -> str:
    return f"<!-- modelguard:incident={incident_id} -->"


METRIC_SOURCE = {
    "referee": "The metric was computed by ModelGuard from the model's predictions against labels the model's code "
    "never saw.",
    "self_reported": "**Self-reported metric**: the figures were printed by the workspace's own evaluation, not "
    "computed by ModelGuard; the model's code could have chosen them.",
}


def render_comment(finding: Finding, content: str, links: PublicationLinks) -> CommentDocument:
    """The comment as posted: the hidden marker that finds it again, the content, the links footer."""
    marker = comment_marker(finding.incident_id)
    return CommentDocument(marker, content, marker + "\n" + with_footer(content, links))


def render_content(finding: Finding) -> str:
    lines = [f"## ModelGuard: {HEADLINES[finding.outcome]}", ""]
    lines += [f"**{finding.title}**", ""]
    payload = finding.payload
    if isinstance(payload, UpstreamRiskDetected):
        lines += [f"Cause: `{payload.cause}` — {payload.change_summary}", "", "| model | deployments | owners |"]
        lines += ["|---|---|---|"]
        lines += [
            f"| `{a.model_urn}` | {', '.join(a.deployments) or '—'} | {', '.join(a.owners) or '—'} |"
            for a in payload.affected
        ]
        return "\n".join(lines) + "\n"
    gate = payload.gate
    lines += [
        "| gate | baseline | candidate | tolerance |",
        "|---|---|---|---|",
        f"| `{gate.metric}` ({gate.direction}) | {gate.baseline:.4f} | {gate.candidate:.4f} | {gate.tolerance} |",
        "",
        METRIC_SOURCE.get(gate.metric_source, gate.metric_source),
        "",
        "### Diagnosis",
        "",
        "| hypothesis | score | confidence |",
        "|---|---|---|",
    ]
    lines += [f"| {h.name} | {h.score:.3f} | {h.confidence} |" for h in payload.diagnosis.hypotheses]
    lines.append("")
    lines += _evidence_lines(payload.diagnosis)
    if isinstance(payload, RepairWithheld):
        lines += [f"Withheld: {payload.reason}", ""]
        lines += [f"- {v}" for v in payload.violations]
        lines += ([""] if payload.violations else []) + owner_lines(payload)
    if isinstance(payload, RepairValidated | ValidationFailed):
        report = payload.validation
        lines += [
            f"### Repair (`{payload.patch.strategy}`, {', '.join(payload.patch.files)})",
            "",
            "```diff",
            payload.patch.diff.rstrip("\n"),
            "```",
            "",
            "### Validation in an isolated copy",
            "",
            "| check | result |",
            "|---|---|",
        ]
        lines += [f"| {c.name} | {'passed' if c.passed else 'FAILED'} |" for c in report.checks]
        lines.append("")
        if report.metric_after_repair is not None:
            lines.append(f"`{gate.metric}` after repair: {report.metric_after_repair:.4f}")
        lines.append(f"Tests: {report.tests_passed} passed, {report.tests_failed} failed")
        if isinstance(payload, ValidationFailed):
            lines.append(f"Not proposed: {payload.reason}")
    lines += ["", f"Policy `{payload.policy.name}` sha256 `{payload.policy.artifact.sha256[:16]}`. A human decides."]
    return "\n".join(lines) + "\n"
