"""The check run on the candidate commit: its conclusion follows the outcome, and never says success.

ModelGuard only publishes when the quality gate regressed, so none of its outcomes is a pass:
- repair_validated → action_required: a validated fix is proposed and a person must apply or reject it;
- validation_failed → failure: the regression stands and the attempted fix did not hold;
- repair_withheld (abstained or refused by the patch guard) → action_required: the regression stands and a
  person must look. Not neutral: branch protection counts neutral as passing, which would turn "ModelGuard
  could not decide" into a green check.
"""

from __future__ import annotations

from contracts.outcomes import Outcome
from services.publisher.finding import Finding
from services.publisher.github_documents import CheckRunDocument
from services.publisher.publication_links import PublicationLinks, with_footer
from services.publisher.render_comment import HEADLINES

CONCLUSIONS: dict[Outcome, str] = {
    Outcome.REPAIR_VALIDATED: "action_required",
    Outcome.VALIDATION_FAILED: "failure",
    Outcome.REPAIR_WITHHELD: "action_required",
}
MAX_OUTPUT_CHARS = 65_000  # GitHub caps summary and text at 65535 characters each


def render_check_run(finding: Finding, content: str, links: PublicationLinks) -> CheckRunDocument | None:
    if finding.head_sha is None or finding.outcome not in CONCLUSIONS:
        return None
    conclusion = CONCLUSIONS[finding.outcome]
    headline = HEADLINES[finding.outcome]
    if finding.abstained:
        headline = "The diagnosis abstained: no repair is proposed"
    summary = with_footer(f"**{finding.title}**\n\n{headline}. A human decides.", links)
    text = content if len(content) <= MAX_OUTPUT_CHARS else content[:MAX_OUTPUT_CHARS] + "\n\n(truncated)"
    return CheckRunDocument(
        head_sha=finding.head_sha,
        external_id=finding.incident_id,
        conclusion=conclusion,
        title=headline,
        summary=summary,
        text=text,
    )
