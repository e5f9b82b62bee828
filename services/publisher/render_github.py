"""Everything the publisher sends to GitHub for one finding: comment, review (validated repairs), check run."""

from __future__ import annotations

from services.publisher.finding import Finding
from services.publisher.github_documents import GitHubPublication
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_check_run import render_check_run
from services.publisher.render_comment import render_comment
from services.publisher.render_review import render_review


def render_github(finding: Finding, content: str, links: PublicationLinks) -> GitHubPublication | None:
    """None when the finding belongs to no commit (an upstream risk has no pull request)."""
    check_run = render_check_run(finding, content, links)
    if finding.repository is None or check_run is None:
        return None
    return GitHubPublication(
        repository=finding.repository,
        pull_request=finding.pull_request,
        head_sha=check_run.head_sha,
        comment=render_comment(finding, content, links),
        review=render_review(finding, links),
        check_run=check_run,
    )
