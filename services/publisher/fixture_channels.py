"""Fixture mode: GitHub and DataHub stood in for by files, with the same create / update / no-op semantics.

The files are what would have been sent: the comment as markdown, the review and the check run as the JSON of
their API requests, the incident as MCP JSON a real DataHub ingests with `datahub ingest mcps FILE`. Writes are
atomic so a crash never leaves half a publication.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from contracts.events.publication import ChannelResult
from libs.atomic_file import atomic_write
from services.publisher.datahub_channel import DataHubIncidents
from services.publisher.datahub_incident_store import FileIncidentStore
from services.publisher.github_documents import CheckRunDocument, GitHubPublication
from services.publisher.publication_links import content_of


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


def _write_unless_same(path: Path, data: bytes, same: bool) -> str:
    existed = path.exists()
    if existed and same:
        return "noop"
    atomic_write(path, data)
    return "updated" if existed else "created"


def _json_bytes(document: object) -> bytes:
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()


class FixtureGitHub:
    def __init__(self, root: Path) -> None:
        self.root = root / "github"

    def _result(self, status: str, target: str, identifier: str, digest: str) -> ChannelResult:
        return ChannelResult(
            channel="github", status=status, target=target, identifier=identifier, content_digest=digest, dry_run=True
        )

    def _check_run(self, check: CheckRunDocument, repo_dir: Path) -> str:
        path = repo_dir / "check-runs" / f"{check.head_sha}-{_slug(check.external_id)}.json"
        existing = json.loads(path.read_text()) if path.exists() else None
        same = existing is not None and check.says_the_same_as(existing)
        return _write_unless_same(path, _json_bytes(check.to_api(None)), same)

    def publish(self, publication: GitHubPublication) -> list[ChannelResult]:
        p = publication
        repo_dir = self.root / _slug(p.repository)
        pr_dir = repo_dir / (f"pr-{p.pull_request}" if p.pull_request else "no-pr")
        pr_target = f"{p.repository}#{p.pull_request}" if p.pull_request else p.repository
        comment = p.comment
        path = pr_dir / f"{_slug(comment.marker.strip('<!->= '))}.md"
        same = path.exists() and content_of(path.read_text()) == content_of(comment.body)
        status = _write_unless_same(path, comment.body.encode(), same) if p.pull_request else "skipped"
        results = [self._result(status, pr_target, comment.marker, comment.content_digest)]
        if p.review is not None and p.pull_request is not None:
            review = p.review
            review_path = pr_dir / f"review-{_slug(review.marker.strip('<!->= '))}.json"
            request: dict[str, object] = {"commit_id": review.commit_id, "body": review.body, "event": "COMMENT"}
            request["comments"] = [s.to_api() for s in review.suggestions]
            status = _write_unless_same(review_path, _json_bytes(request), review_path.exists())
            results.append(self._result(status, pr_target, review.marker, review.content_digest))
        check = p.check_run
        results.append(
            self._result(
                self._check_run(check, repo_dir),
                f"{p.repository}@{check.head_sha}",
                f"check-run:{check.name}:{check.external_id}",
                check.content_digest,
            )
        )
        return results


def fixture_datahub(root: Path) -> DataHubIncidents:
    return DataHubIncidents(FileIncidentStore(root / "datahub"), dry_run=True)
