"""The check run named "ModelGuard" on the candidate commit, one per incident (`external_id`).

Found among the commit's check runs of that name (every page, `filter=all`); updated in place when the outcome
or its words changed, left alone otherwise. GitHub cannot delete check runs: if two publishers ever create one
each, GitHub shows the latest of that name, and both say the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from services.publisher.github_api import GitHubReads, GitHubWrites
from services.publisher.github_documents import CheckRunDocument, Repository
from services.publisher.github_retry import RetryPolicy
from services.publisher.github_write_retry import retry_step


@dataclass(frozen=True)
class CheckRunOutcome:
    status: str
    html_url: str | None
    """Where people see the check run, as GitHub answered (none in a dry run)."""


class CheckRunPublisher:
    def __init__(self, reads: GitHubReads, writes: GitHubWrites, retry: RetryPolicy, sleep: Callable[[float], None]):
        self.reads = reads
        self.writes = writes
        self.retry = retry
        self.sleep = sleep

    def upsert(
        self, repo: Repository, document: CheckRunDocument, details_url: str | None, label: str
    ) -> CheckRunOutcome:
        return retry_step(lambda wrote: self._step(repo, document, details_url, label, wrote), self.retry, self.sleep)

    def _step(
        self, repo: Repository, document: CheckRunDocument, details_url: str | None, label: str, wrote: bool
    ) -> CheckRunOutcome:
        runs = [
            r for r in self.reads.check_runs(repo, document.head_sha) if r.get("external_id") == document.external_id
        ]
        if not runs:
            created = self.writes.create_check_run(repo, document.to_api(details_url), label)
            return CheckRunOutcome("created", _url(created))
        latest = max(runs, key=lambda r: int(r["id"]))
        if document.says_the_same_as(latest):
            return CheckRunOutcome("created" if wrote else "noop", _url(latest))
        update = document.to_api(details_url)
        del update["head_sha"]  # fixed at creation
        updated = self.writes.update_check_run(repo, int(latest["id"]), update, label)
        return CheckRunOutcome("updated", _url(updated) or _url(latest))


def _url(check_run: object) -> str | None:
    url = check_run.get("html_url") if isinstance(check_run, dict) else None
    return url if isinstance(url, str) and url else None
