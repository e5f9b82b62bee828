"""A loopback GitHub REST API: issue comments, pull-request reviews, check runs, App installation tokens.

It answers as GitHub does where the publisher depends on it: pagination with absolute `Link` headers
(`per_page` capped at 100), pending reviews visible to their author only and at most one per user and pull
request (422 otherwise), check runs filtered by `check_name`, tokens checked on every request, App JWTs
verified with the App's public key. Every request is recorded; failures and barriers are injectable.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.support.loopback_http import LoopbackServer, Reply, Request

Json = dict[str, Any]
COMMENTS = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/(\d+)/comments$")
COMMENT = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/comments/(\d+)$")
REVIEWS = re.compile(r"^/repos/([^/]+)/([^/]+)/pulls/(\d+)/reviews$")
REVIEW = re.compile(r"^/repos/([^/]+)/([^/]+)/pulls/(\d+)/reviews/(\d+)$")
REVIEW_EVENTS = re.compile(r"^/repos/([^/]+)/([^/]+)/pulls/(\d+)/reviews/(\d+)/events$")
COMMIT_CHECK_RUNS = re.compile(r"^/repos/([^/]+)/([^/]+)/commits/([0-9a-f]{40})/check-runs$")
CHECK_RUNS = re.compile(r"^/repos/([^/]+)/([^/]+)/check-runs$")
CHECK_RUN = re.compile(r"^/repos/([^/]+)/([^/]+)/check-runs/(\d+)$")
ACCESS_TOKENS = re.compile(r"^/app/installations/(\d+)/access_tokens$")


@dataclass(frozen=True)
class FakeApp:
    app_id: str
    installation_id: int
    public_key: rsa.RSAPublicKey


def _b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


@dataclass
class _PullRequest:
    comments: list[Json] = field(default_factory=list)
    reviews: list[Json] = field(default_factory=list)


class FakeGitHub(LoopbackServer):
    def __init__(self, tokens: dict[str, str] | None = None, app: FakeApp | None = None) -> None:
        """`tokens`: accepted token → user login; `app`: an App whose JWTs buy installation tokens."""
        super().__init__()
        self.tokens = dict(tokens or {})
        self.app = app
        self.pulls: dict[tuple[str, str, int], _PullRequest] = {}
        self.check_runs: dict[tuple[str, str], list[Json]] = {}
        self.review_lines: dict[str, set[int]] = {}  # path -> RIGHT-side lines inside the pull request's diff
        self._ids = itertools.count(1000)

    # -- state helpers for tests ---------------------------------------------------------------------
    def pull(self, repo: str, number: int) -> _PullRequest:
        owner, name = repo.split("/")
        with self.lock:
            return self.pulls.setdefault((owner, name, number), _PullRequest())

    def seed_comments(self, repo: str, number: int, count: int, login: str = "someone") -> None:
        pull = self.pull(repo, number)
        with self.lock:
            for i in range(count):
                pull.comments.append(self._comment(repo, number, f"an unrelated comment {i}", login))

    def comments_with(self, repo: str, number: int, marker: str) -> list[Json]:
        with self.lock:
            return [c for c in self.pull(repo, number).comments if marker in c["body"]]

    def runs(self, repo: str) -> list[Json]:
        owner, name = repo.split("/")
        with self.lock:
            return list(self.check_runs.get((owner, name), []))

    # -- protocol ------------------------------------------------------------------------------------
    def _comment(self, repo: str, number: int, body: str, login: str) -> Json:
        comment_id = next(self._ids)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return {
            "id": comment_id,
            "node_id": f"IC_{comment_id}",
            "body": body,
            "html_url": f"https://github.com/{repo}/pull/{number}#issuecomment-{comment_id}",
            "user": {"login": login},
            "created_at": now,
            "updated_at": now,
        }

    def _login(self, request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ").removeprefix("token ").strip()
        return self.tokens.get(token)

    def _page(self, request: Request, items: list[Json], wrap: str | None = None) -> Reply:
        per_page = min(int(request.query.get("per_page", "30")), 100)
        page = int(request.query.get("page", "1"))
        chunk = items[(page - 1) * per_page : page * per_page]
        headers: dict[str, str] = {}
        last = max(1, -(-len(items) // per_page))
        links = []
        for rel, number in (("next", page + 1), ("last", last)):
            if rel == "next" and page >= last:
                continue
            query = urlencode({**request.query, "page": number, "per_page": per_page})
            links.append(f'<{self.base_url}{request.path}?{query}>; rel="{rel}"')
        if links:
            headers["Link"] = ", ".join(links)
        document: Any = {"total_count": len(items), wrap: chunk} if wrap else chunk
        return Reply(200, document, headers)

    def _access_token(self, request: Request, installation: str) -> Reply:
        if self.app is None or int(installation) != self.app.installation_id:
            return Reply(404, {"message": "Not Found"})
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        try:
            header, claims, signature = token.split(".")
            self.app.public_key.verify(
                _b64decode(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
            )
            document = json.loads(_b64decode(claims))
        except (ValueError, InvalidSignature):
            return Reply(401, {"message": "A JSON web token could not be decoded"})
        if document.get("iss") != self.app.app_id or document.get("exp", 0) < time.time():
            return Reply(401, {"message": "'Expiration time' claim ('exp') is too far in the future or expired"})
        installation_token = "ghs_" + secrets.token_hex(16)
        with self.lock:
            self.tokens[installation_token] = "modelguard[bot]"
        expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
        return Reply(201, {"token": installation_token, "expires_at": expires})

    def route(self, request: Request) -> Reply:
        if match := ACCESS_TOKENS.match(request.path):
            return self._access_token(request, match.group(1)) if request.method == "POST" else Reply(404)
        login = self._login(request)
        if login is None:
            return Reply(401, {"message": "Bad credentials"})
        with self.lock:
            return self._route(request, login)

    def _route(self, request: Request, login: str) -> Reply:
        method, path = request.method, request.path
        if match := COMMENTS.match(path):
            owner, name, number = match.group(1), match.group(2), int(match.group(3))
            pull = self.pull(f"{owner}/{name}", number)
            if method == "GET":
                return self._page(request, pull.comments)
            comment = self._comment(f"{owner}/{name}", number, request.json()["body"], login)
            pull.comments.append(comment)
            return Reply(201, comment)
        if match := COMMENT.match(path):
            return self._one_comment(request, match.group(1), match.group(2), int(match.group(3)))
        if match := REVIEWS.match(path):
            pull = self.pull(f"{match.group(1)}/{match.group(2)}", int(match.group(3)))
            visible = [r for r in pull.reviews if r["state"] != "PENDING" or r["user"]["login"] == login]
            if method == "GET":
                return self._page(request, visible)
            return self._create_review(request, pull, login)
        if match := REVIEW_EVENTS.match(path):
            pull = self.pull(f"{match.group(1)}/{match.group(2)}", int(match.group(3)))
            return self._submit_review(request, pull, int(match.group(4)), login)
        if match := REVIEW.match(path):
            pull = self.pull(f"{match.group(1)}/{match.group(2)}", int(match.group(3)))
            return self._delete_review(pull, int(match.group(4)), login)
        if match := COMMIT_CHECK_RUNS.match(path):
            runs = [
                r
                for r in self.check_runs.get((match.group(1), match.group(2)), [])
                if r["head_sha"] == match.group(3) and r["name"] == request.query.get("check_name", r["name"])
            ]
            if request.query.get("filter", "latest") == "latest":
                latest: dict[str, Json] = {}
                for run in runs:
                    latest[run["name"]] = run
                runs = list(latest.values())
            return self._page(request, runs, wrap="check_runs")
        if match := CHECK_RUNS.match(path):
            run = {"id": next(self._ids), "status": "completed", "details_url": None, **request.json()}
            run["html_url"] = f"https://github.com/{match.group(1)}/{match.group(2)}/runs/{run['id']}"
            self.check_runs.setdefault((match.group(1), match.group(2)), []).append(run)
            return Reply(201, run)
        if match := CHECK_RUN.match(path):
            for run in self.check_runs.get((match.group(1), match.group(2)), []):
                if run["id"] == int(match.group(3)):
                    run.update(request.json())
                    return Reply(200, run)
            return Reply(404, {"message": "Not Found"})
        return Reply(404, {"message": "Not Found"})

    def _one_comment(self, request: Request, owner: str, name: str, comment_id: int) -> Reply:
        for (o, n, _), pull in self.pulls.items():
            if (o, n) != (owner, name):
                continue
            for comment in pull.comments:
                if comment["id"] == comment_id:
                    if request.method == "DELETE":
                        pull.comments.remove(comment)
                        return Reply(204)
                    comment["body"] = request.json()["body"]
                    comment["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                    return Reply(200, comment)
        return Reply(404, {"message": "Not Found"})

    def _create_review(self, request: Request, pull: _PullRequest, login: str) -> Reply:
        document = request.json()
        event = document.get("event")
        if event is None and any(r["state"] == "PENDING" and r["user"]["login"] == login for r in pull.reviews):
            return Reply(
                422,
                {
                    "message": "Unprocessable Entity",
                    "errors": ["User can only have one pending review per pull request"],
                },
            )
        for comment in document.get("comments", []):
            allowed = self.review_lines.get(comment["path"])
            lines = range(comment.get("start_line", comment["line"]), comment["line"] + 1)
            if allowed is not None and not set(lines) <= allowed:
                return Reply(
                    422,
                    {
                        "message": "Unprocessable Entity",
                        "errors": ["pull_request_review_thread.line must be part of the diff"],
                    },
                )
        review = {
            "id": next(self._ids),
            "body": document.get("body", ""),
            "state": "PENDING" if event is None else "COMMENTED",
            "commit_id": document.get("commit_id"),
            "user": {"login": login},
            "comments": document.get("comments", []),
        }
        pull.reviews.append(review)
        return Reply(200, review)

    def _submit_review(self, request: Request, pull: _PullRequest, review_id: int, login: str) -> Reply:
        for review in pull.reviews:
            if review["id"] == review_id and (review["state"] != "PENDING" or review["user"]["login"] == login):
                if review["state"] != "PENDING":
                    return Reply(
                        422, {"message": "Unprocessable Entity", "errors": ["Review has already been submitted"]}
                    )
                review["state"] = "COMMENTED"
                review["body"] = request.json().get("body") or review["body"]
                return Reply(200, review)
        return Reply(404, {"message": "Not Found"})

    def _delete_review(self, pull: _PullRequest, review_id: int, login: str) -> Reply:
        for review in pull.reviews:
            if review["id"] == review_id and review["user"]["login"] == login:
                if review["state"] != "PENDING":
                    return Reply(
                        422, {"message": "Unprocessable Entity", "errors": ["Can not delete a non-pending review"]}
                    )
                pull.reviews.remove(review)
                return Reply(200, review)
        return Reply(404, {"message": "Not Found"})
