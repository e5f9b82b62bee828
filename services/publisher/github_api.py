"""The GitHub REST endpoints the publisher uses: reads (listings, every page) and writes.

Writes are a separate protocol so a dry run can swap in a recorder (`github_dry_run.RecordedWrites`) that
keeps what would have been sent, while the reads still show what GitHub holds.
"""

from __future__ import annotations

from typing import Any, Protocol

from services.publisher.github_answers import answer_json, github_object
from services.publisher.github_documents import CHECK_RUN_NAME, Repository
from services.publisher.github_http import GitHubHttp

Json = dict[str, Any]


class GitHubReads(Protocol):
    def issue_comments(self, repo: Repository, number: int) -> list[Json]: ...

    def reviews(self, repo: Repository, number: int) -> list[Json]: ...

    def check_runs(self, repo: Repository, head_sha: str) -> list[Json]: ...


class GitHubWrites(Protocol):
    remote: bool  # False: nothing reaches GitHub (dry run)

    def create_comment(self, repo: Repository, number: int, body: str, label: str) -> Json: ...

    def update_comment(self, repo: Repository, comment_id: int, body: str, label: str) -> Json: ...

    def delete_comment(self, repo: Repository, comment_id: int, label: str) -> None: ...

    def create_pending_review(self, repo: Repository, number: int, review: Json, label: str) -> Json: ...

    def submit_review(self, repo: Repository, number: int, review_id: int, body: str, label: str) -> Json: ...

    def delete_pending_review(self, repo: Repository, number: int, review_id: int, label: str) -> None: ...

    def create_check_run(self, repo: Repository, check_run: Json, label: str) -> Json: ...

    def update_check_run(self, repo: Repository, check_run_id: int, check_run: Json, label: str) -> Json: ...


class GitHubApi:
    """Reads and writes against GitHub itself. `label` (for the dry-run recorder) is ignored here."""

    remote = True

    def __init__(self, http: GitHubHttp) -> None:
        self.http = http

    @staticmethod
    def _repo(repo: Repository) -> str:
        return f"/repos/{repo.owner}/{repo.name}"

    def _listing(self, path: str, params: dict[str, str] | None = None, items_key: str | None = None) -> list[Json]:
        return [github_object(item, f"GitHub GET {path}") for item in self.http.paginate(path, params, items_key)]

    def _write(self, method: str, path: str, body: Json) -> Json:
        response = self.http.request(method, path, json=body)
        where = f"GitHub {method} {path}"
        return github_object(answer_json(response, where), where)

    def issue_comments(self, repo: Repository, number: int) -> list[Json]:
        return self._listing(f"{self._repo(repo)}/issues/{number}/comments")

    def reviews(self, repo: Repository, number: int) -> list[Json]:
        return self._listing(f"{self._repo(repo)}/pulls/{number}/reviews")

    def check_runs(self, repo: Repository, head_sha: str) -> list[Json]:
        params = {"check_name": CHECK_RUN_NAME, "filter": "all"}
        return self._listing(f"{self._repo(repo)}/commits/{head_sha}/check-runs", params, "check_runs")

    def create_comment(self, repo: Repository, number: int, body: str, label: str) -> Json:
        return self._write("POST", f"{self._repo(repo)}/issues/{number}/comments", {"body": body})

    def update_comment(self, repo: Repository, comment_id: int, body: str, label: str) -> Json:
        return self._write("PATCH", f"{self._repo(repo)}/issues/comments/{comment_id}", {"body": body})

    def delete_comment(self, repo: Repository, comment_id: int, label: str) -> None:
        self.http.request("DELETE", f"{self._repo(repo)}/issues/comments/{comment_id}")

    def create_pending_review(self, repo: Repository, number: int, review: Json, label: str) -> Json:
        # without an `event` the review stays PENDING: visible to its author only, until submitted
        return self._write("POST", f"{self._repo(repo)}/pulls/{number}/reviews", review)

    def submit_review(self, repo: Repository, number: int, review_id: int, body: str, label: str) -> Json:
        path = f"{self._repo(repo)}/pulls/{number}/reviews/{review_id}/events"
        return self._write("POST", path, {"event": "COMMENT", "body": body})

    def delete_pending_review(self, repo: Repository, number: int, review_id: int, label: str) -> None:
        self.http.request("DELETE", f"{self._repo(repo)}/pulls/{number}/reviews/{review_id}")

    def create_check_run(self, repo: Repository, check_run: Json, label: str) -> Json:
        return self._write("POST", f"{self._repo(repo)}/check-runs", check_run)

    def update_check_run(self, repo: Repository, check_run_id: int, check_run: Json, label: str) -> Json:
        return self._write("PATCH", f"{self._repo(repo)}/check-runs/{check_run_id}", check_run)
