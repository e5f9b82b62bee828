"""The GitHub channel against the REST API: the comment, the review (validated repairs only), the check run.

With remote writes it publishes; with recorded writes (dry run) it still reads GitHub to know what it would
do, and keeps the requests it would have sent as files. A publisher that lost the race for the comment leaves
the review and the check run to the one that won, so a race produces one of each.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from contracts.events.publication import ChannelResult
from services.publisher.channel_errors import ChannelRejected
from services.publisher.github_api import GitHubReads, GitHubWrites
from services.publisher.github_check_run import CheckRunOutcome, CheckRunPublisher
from services.publisher.github_comment import CommentOutcome, CommentPublisher
from services.publisher.github_documents import GitHubPublication, NotAGitHubRepository, Repository
from services.publisher.github_retry import RetryPolicy
from services.publisher.github_review import ReviewPublisher

log = logging.getLogger(__name__)


def web_address(url: str | None) -> str | None:
    """An https address GitHub answered with, or None: nothing else is kept for a page to link."""
    if not url or len(url) > 2000 or not url.startswith("https://") or any(c.isspace() for c in url):
        return None
    return url


class LiveGitHub:
    def __init__(
        self,
        reads: GitHubReads,
        writes: GitHubWrites,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        policy = retry or RetryPolicy()
        self.dry_run = not writes.remote
        self.comments = CommentPublisher(reads, writes, policy, sleep)
        self.reviews = ReviewPublisher(reads, writes, policy, sleep)
        self.check_runs = CheckRunPublisher(reads, writes, policy, sleep)

    def _result(self, status: str, target: str, identifier: str, digest: str, url: str | None = None) -> ChannelResult:
        """``url``: where GitHub says the published thing is; kept only when it was published for real."""
        return ChannelResult(
            channel="github",
            status=status,  # type: ignore[arg-type]
            target=target,
            identifier=identifier,
            content_digest=digest,
            dry_run=self.dry_run,
            url=None if self.dry_run or status in ("failed", "skipped") else web_address(url),
        )

    def _attempt(self, what: str, action: Callable[[], str]) -> str:
        try:
            return action()
        except ChannelRejected as exc:
            log.warning("GitHub refused the %s: %s", what, exc)
            return "failed"

    def _comment(self, repo: Repository, p: GitHubPublication, incident: str) -> CommentOutcome:
        if p.pull_request is None:
            return CommentOutcome("skipped", None, None)
        try:
            return self.comments.upsert(repo, p.pull_request, p.comment, f"comment-{incident}")
        except ChannelRejected as exc:
            log.warning("GitHub refused the comment: %s", exc)
            return CommentOutcome("failed", None, None)

    def publish(self, publication: GitHubPublication) -> list[ChannelResult]:
        p, check, review = publication, publication.check_run, publication.review
        incident = check.external_id
        pr_target = f"{p.repository}#{p.pull_request}" if p.pull_request else p.repository
        try:
            repo = Repository.parse(p.repository)
        except NotAGitHubRepository as exc:
            log.warning("%s", exc)
            return [self._result("failed", p.repository, p.comment.marker, p.comment.content_digest)]
        comment = self._comment(repo, p, incident)
        results = [
            self._result(comment.status, pr_target, p.comment.marker, p.comment.content_digest, comment.html_url)
        ]
        number = p.pull_request
        if review is not None and number is not None:
            status = (
                "skipped"
                if comment.lost_race
                else self._attempt("review", lambda: self.reviews.upsert(repo, number, review, f"review-{incident}"))
            )
            results.append(self._result(status, pr_target, review.marker, review.content_digest))
        run = CheckRunOutcome("skipped", None) if comment.lost_race else self._check_run(repo, p, comment, incident)
        target = f"{repo.full_name}@{check.head_sha}"
        identifier = f"check-run:{check.name}:{incident}"
        results.append(self._result(run.status, target, identifier, check.content_digest, run.html_url))
        return results

    def _check_run(
        self, repo: Repository, p: GitHubPublication, comment: CommentOutcome, incident: str
    ) -> CheckRunOutcome:
        try:
            return self.check_runs.upsert(repo, p.check_run, comment.html_url, f"check-run-{incident}")
        except ChannelRejected as exc:
            log.warning("GitHub refused the check run: %s", exc)
            return CheckRunOutcome("failed", None)
