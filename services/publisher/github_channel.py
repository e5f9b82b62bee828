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
from services.publisher.github_check_run import CheckRunPublisher
from services.publisher.github_comment import CommentOutcome, CommentPublisher
from services.publisher.github_documents import GitHubPublication, NotAGitHubRepository, Repository
from services.publisher.github_retry import RetryPolicy
from services.publisher.github_review import ReviewPublisher

log = logging.getLogger(__name__)


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

    def _result(self, status: str, target: str, identifier: str, digest: str) -> ChannelResult:
        return ChannelResult(
            channel="github",
            status=status,  # type: ignore[arg-type]
            target=target,
            identifier=identifier,
            content_digest=digest,
            dry_run=self.dry_run,
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
        results = [self._result(comment.status, pr_target, p.comment.marker, p.comment.content_digest)]
        number = p.pull_request
        if review is not None and number is not None:
            status = (
                "skipped"
                if comment.lost_race
                else self._attempt("review", lambda: self.reviews.upsert(repo, number, review, f"review-{incident}"))
            )
            results.append(self._result(status, pr_target, review.marker, review.content_digest))
        status = (
            "skipped"
            if comment.lost_race
            else self._attempt(
                "check run", lambda: self.check_runs.upsert(repo, check, comment.html_url, f"check-run-{incident}")
            )
        )
        target = f"{repo.full_name}@{check.head_sha}"
        results.append(self._result(status, target, f"check-run:{check.name}:{incident}", check.content_digest))
        return results
