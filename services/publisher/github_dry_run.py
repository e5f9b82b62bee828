"""A dry run's GitHub writes: each request that would have been sent, kept as a JSON file instead.

One file per publication target (`label`, e.g. the comment of an incident), overwritten by the latest plan:
`<root>/<owner>_<name>/<label>.json` with the method, the path and the JSON body.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from libs.atomic_file import atomic_write
from services.publisher.github_documents import Repository

Json = dict[str, Any]
PLANNED_ID = 0  # what a dry run answers for the id of something it did not create


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


class RecordedWrites:
    remote = False

    def __init__(self, root: Path) -> None:
        self.root = root

    def _record(self, repo: Repository, label: str, method: str, path: str, body: Json | None) -> Json:
        document = {"method": method, "path": path, "json": body}
        target = self.root / _slug(repo.full_name) / f"{_slug(label)}.json"
        atomic_write(target, (json.dumps(document, indent=2, sort_keys=True) + "\n").encode())
        return {"id": PLANNED_ID, "html_url": None, **(body or {})}

    def create_comment(self, repo: Repository, number: int, body: str, label: str) -> Json:
        path = f"/repos/{repo.full_name}/issues/{number}/comments"
        return self._record(repo, label, "POST", path, {"body": body})

    def update_comment(self, repo: Repository, comment_id: int, body: str, label: str) -> Json:
        path = f"/repos/{repo.full_name}/issues/comments/{comment_id}"
        return self._record(repo, label, "PATCH", path, {"body": body})

    def delete_comment(self, repo: Repository, comment_id: int, label: str) -> None:
        self._record(repo, label, "DELETE", f"/repos/{repo.full_name}/issues/comments/{comment_id}", None)

    def create_pending_review(self, repo: Repository, number: int, review: Json, label: str) -> Json:
        # recorded as the one request a person would send: the review, submitted
        path = f"/repos/{repo.full_name}/pulls/{number}/reviews"
        return self._record(repo, label, "POST", path, {**review, "event": "COMMENT"})

    def submit_review(self, repo: Repository, number: int, review_id: int, body: str, label: str) -> Json:
        return {"id": review_id, "state": "COMMENTED", "body": body}

    def delete_pending_review(self, repo: Repository, number: int, review_id: int, label: str) -> None:
        return None

    def create_check_run(self, repo: Repository, check_run: Json, label: str) -> Json:
        return self._record(repo, label, "POST", f"/repos/{repo.full_name}/check-runs", check_run)

    def update_check_run(self, repo: Repository, check_run_id: int, check_run: Json, label: str) -> Json:
        return self._record(repo, label, "PATCH", f"/repos/{repo.full_name}/check-runs/{check_run_id}", check_run)
