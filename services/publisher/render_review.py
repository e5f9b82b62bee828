"""The pull-request review that proposes the validated patch as suggestions a reviewer applies with one click.

Only a validated repair gets a review. Its marker names the incident and the patch digest, so each patch is
reviewed once however often the publication is retried, and a different patch gets its own review.
"""

from __future__ import annotations

from contracts.events.validation import RepairValidated
from services.publisher.finding import Finding
from services.publisher.github_documents import LineSuggestion, ReviewDocument
from services.publisher.publication_links import PublicationLinks, with_footer
from services.publisher.suggestion import UnsuggestableDiff, suggestions_from_diff


def review_marker(incident_id: str, patch_sha256: str) -> str:
    return f"<!-- modelguard:review={incident_id}:{patch_sha256[:16]} -->"


def render_review(finding: Finding, links: PublicationLinks) -> ReviewDocument | None:
    payload = finding.payload
    if not isinstance(payload, RepairValidated) or finding.head_sha is None:
        return None
    patch = payload.patch
    marker = review_marker(finding.incident_id, patch.artifact.sha256)
    report = payload.validation
    intro = [
        marker,
        f"### ModelGuard proposes a validated repair (`{patch.strategy}`)",
        "",
        f"{finding.title}.",
        f"In an isolated copy with this patch: tests {report.tests_passed} passed, {report.tests_failed} failed"
        + (
            f"; `{payload.gate.metric}` {report.metric_after_repair:.4f}."
            if report.metric_after_repair is not None
            else "."
        ),
        "",
    ]
    try:
        suggestions = tuple(
            LineSuggestion(s.path, s.start_line, s.line, s.comment_body()) for s in suggestions_from_diff(patch.diff)
        )
    except UnsuggestableDiff:
        suggestions = ()
    diff_block = ["```diff", patch.diff.rstrip("\n"), "```", ""]
    apply_hint = ["Apply the suggestion below, or leave it: a human decides.", ""]
    body = with_footer("\n".join(intro + (apply_hint if suggestions else diff_block)), links)
    fallback = with_footer("\n".join([*intro, "The patch (outside this pull request's diff):", "", *diff_block]), links)
    return ReviewDocument(marker, finding.head_sha, body, suggestions, fallback)
