"""The pull-request review carrying the validated patch as suggestions, created once per incident and patch.

A submitted review cannot be deleted, so duplicates must never be submitted. The review is first created
PENDING (visible to its author only), then the reviews are read again: only the oldest review carrying the
marker is submitted; a later pending one is deleted by its author. GitHub itself allows one pending review per
user and pull request, and answers a second with 422; that too means another publisher is mid-way, and the
next read finds its review. A pending review left by a crash is found by the next publication and submitted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from services.publisher.channel_errors import ChannelRejected
from services.publisher.github_api import GitHubReads, GitHubWrites
from services.publisher.github_documents import Repository, ReviewDocument
from services.publisher.github_retry import RetryPolicy
from services.publisher.github_write_retry import retry_step

log = logging.getLogger(__name__)
Json = dict[str, Any]
PENDING = "PENDING"


class _TryAgain(Exception):
    """Another publisher is between creating and submitting: read again."""


def _marked(reviews: list[Json], marker: str) -> list[Json]:
    return sorted((r for r in reviews if marker in (r.get("body") or "")), key=lambda r: int(r["id"]))


class ReviewPublisher:
    def __init__(self, reads: GitHubReads, writes: GitHubWrites, retry: RetryPolicy, sleep: Callable[[float], None]):
        self.reads = reads
        self.writes = writes
        self.retry = retry
        self.sleep = sleep

    def upsert(self, repo: Repository, number: int, document: ReviewDocument, label: str) -> str:
        for attempt in range(1, self.retry.max_attempts + 1):
            try:
                return retry_step(
                    lambda wrote: self._step(repo, number, document, label, wrote), self.retry, self.sleep
                )
            except _TryAgain:
                self.sleep(self.retry.backoff(attempt))
        raise ChannelRejected(f"the review {document.marker} stayed pending with another publisher")

    def _submit(self, repo: Repository, number: int, review: Json, document: ReviewDocument, label: str) -> str:
        try:
            self.writes.submit_review(repo, number, int(review["id"]), review.get("body") or document.body, label)
        except ChannelRejected as exc:
            if exc.status == 422:  # already submitted by the publisher that created it
                raise _TryAgain() from None
            raise
        return "created"

    def _create_pending(self, repo: Repository, number: int, document: ReviewDocument, label: str) -> Json:
        review: Json = {"commit_id": document.commit_id, "body": document.body}
        if document.suggestions:
            review["comments"] = [s.to_api() for s in document.suggestions]
        try:
            return self.writes.create_pending_review(repo, number, review, label)
        except ChannelRejected as exc:
            if exc.status != 422:
                raise
            if "pending review" in str(exc).lower():
                raise _TryAgain() from None
            if not document.suggestions:
                raise
            # the suggested lines are outside the pull request's diff: propose the patch in the body instead
            log.info("GitHub refused the suggestion lines for %s (%s); sending the patch as text", label, exc)
            fallback = {"commit_id": document.commit_id, "body": document.body_without_suggestions}
            return self.writes.create_pending_review(repo, number, fallback, label)

    def _step(self, repo: Repository, number: int, document: ReviewDocument, label: str, wrote: bool) -> str:
        marked = _marked(self.reads.reviews(repo, number), document.marker)
        if any(r.get("state") != PENDING for r in marked):
            return "created" if wrote else "noop"
        if marked:  # pending: created by a publisher that has not submitted it (yet, or ever)
            return self._submit(repo, number, marked[0], document, label)
        created = self._create_pending(repo, number, document, label)
        if not self.writes.remote:
            return "created"
        marked = _marked(self.reads.reviews(repo, number), document.marker)
        oldest = marked[0] if marked else created
        if int(oldest["id"]) != int(created["id"]):
            log.info("another publisher created the review %s first; removing ours", document.marker)
            self.writes.delete_pending_review(repo, number, int(created["id"]), label)
            return "noop"
        return self._submit(repo, number, created, document, label)
