"""The pull-request comment: found by its hidden marker on every page, created once, updated when the content
changed, left alone when it did not.

Two publishers racing on one incident may both find nothing and both create. Each re-reads after creating:
the oldest marked comment (lowest id) is the one that stays, a later one is deleted by its own author, and
any leftover duplicate (a crash between create and check) is removed by the next publication.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from services.publisher.channel_errors import ChannelRejected
from services.publisher.github_api import GitHubReads, GitHubWrites
from services.publisher.github_documents import CommentDocument, Repository
from services.publisher.github_retry import RetryPolicy
from services.publisher.github_write_retry import retry_step
from services.publisher.publication_links import content_of

log = logging.getLogger(__name__)
Json = dict[str, Any]


@dataclass(frozen=True)
class CommentOutcome:
    status: str
    comment_id: int | None
    html_url: str | None
    lost_race: bool = False


def _marked(comments: list[Json], marker: str) -> list[Json]:
    return sorted((c for c in comments if marker in (c.get("body") or "")), key=lambda c: int(c["id"]))


def _delete_quietly(writes: GitHubWrites, repo: Repository, comment_id: int, label: str) -> None:
    try:
        writes.delete_comment(repo, comment_id, f"{label}-delete-{comment_id}")
    except ChannelRejected as exc:
        if exc.status != 404:  # 404: its author (a racing publisher) deleted it first
            raise


class CommentPublisher:
    def __init__(self, reads: GitHubReads, writes: GitHubWrites, retry: RetryPolicy, sleep: Callable[[float], None]):
        self.reads = reads
        self.writes = writes
        self.retry = retry
        self.sleep = sleep

    def upsert(self, repo: Repository, number: int, document: CommentDocument, label: str) -> CommentOutcome:
        return retry_step(lambda wrote: self._step(repo, number, document, label, wrote), self.retry, self.sleep)

    def _converge(self, repo: Repository, keep: Json, document: CommentDocument, label: str, wrote: bool) -> str:
        if content_of(keep.get("body") or "") == content_of(document.body):
            return "created" if wrote else "noop"
        self.writes.update_comment(repo, int(keep["id"]), document.body, label)
        return "updated"

    def _step(
        self, repo: Repository, number: int, document: CommentDocument, label: str, wrote: bool
    ) -> CommentOutcome:
        marked = _marked(self.reads.issue_comments(repo, number), document.marker)
        if marked:
            keep = marked[0]
            for duplicate in marked[1:]:
                _delete_quietly(self.writes, repo, int(duplicate["id"]), label)
            status = self._converge(repo, keep, document, label, wrote)
            return CommentOutcome(status, int(keep["id"]), keep.get("html_url"))
        created = self.writes.create_comment(repo, number, document.body, label)
        if not self.writes.remote:
            return CommentOutcome("created", None, None)
        marked = _marked(self.reads.issue_comments(repo, number), document.marker)
        oldest = marked[0] if marked else created
        if int(oldest["id"]) == int(created["id"]):
            return CommentOutcome("created", int(created["id"]), created.get("html_url"))
        log.info("another publisher created the comment for %s first; removing ours", document.marker)
        _delete_quietly(self.writes, repo, int(created["id"]), label)
        status = self._converge(repo, oldest, document, label, wrote=False)
        return CommentOutcome(status, int(oldest["id"]), oldest.get("html_url"), lost_race=True)
