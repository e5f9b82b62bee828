"""What the publisher sends to GitHub for one finding, as plain values: built by the renderers, sent by a
channel (live, dry run or fixture files)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from libs.canonical_json import canonical_bytes, sha256_hex
from services.publisher.publication_links import content_of

CHECK_RUN_NAME = "ModelGuard"
_REPOSITORY = re.compile(r"^(?:https?://[^/]+/|git@[^:]+:)?([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")


class NotAGitHubRepository(ValueError):
    pass


@dataclass(frozen=True)
class Repository:
    owner: str
    name: str

    @classmethod
    def parse(cls, text: str) -> Repository:
        """`owner/name`, `https://github.com/owner/name(.git)` or `git@github.com:owner/name.git`."""
        match = _REPOSITORY.match(text.strip())
        if match is None:
            raise NotAGitHubRepository(f"not a GitHub repository: {text!r}")
        return cls(match.group(1), match.group(2))

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass(frozen=True)
class CommentDocument:
    marker: str
    content: str
    body: str

    @property
    def content_digest(self) -> str:
        return sha256_hex(self.content.rstrip("\n").encode())


@dataclass(frozen=True)
class LineSuggestion:
    """A review comment on the RIGHT side of the pull request's diff, carrying a ```suggestion block."""

    path: str
    start_line: int
    line: int
    body: str

    def to_api(self) -> dict[str, object]:
        comment: dict[str, object] = {"path": self.path, "line": self.line, "side": "RIGHT", "body": self.body}
        if self.start_line != self.line:
            comment |= {"start_line": self.start_line, "start_side": "RIGHT"}
        return comment


@dataclass(frozen=True)
class ReviewDocument:
    marker: str
    commit_id: str
    body: str
    suggestions: tuple[LineSuggestion, ...]
    body_without_suggestions: str  # when GitHub refuses the lines (outside the pull request's diff)

    @property
    def content_digest(self) -> str:
        return sha256_hex(canonical_bytes([self.marker, [s.to_api() for s in self.suggestions]]))


@dataclass(frozen=True)
class CheckRunDocument:
    head_sha: str
    external_id: str
    conclusion: str
    title: str
    summary: str
    text: str
    name: str = CHECK_RUN_NAME

    def to_api(self, details_url: str | None) -> dict[str, object]:
        document: dict[str, object] = {
            "name": self.name,
            "head_sha": self.head_sha,
            "external_id": self.external_id,
            "status": "completed",
            "conclusion": self.conclusion,
            "output": {"title": self.title, "summary": self.summary, "text": self.text},
        }
        if details_url:
            document["details_url"] = details_url
        return document

    def says_the_same_as(self, existing: dict[str, object]) -> bool:
        output = existing.get("output") or {}
        assert isinstance(output, dict)
        return (
            existing.get("conclusion") == self.conclusion
            and output.get("title") == self.title
            and content_of(str(output.get("summary") or "")) == content_of(self.summary)
            and (output.get("text") or "") == self.text
        )

    @property
    def content_digest(self) -> str:
        return sha256_hex(canonical_bytes([self.conclusion, self.title, content_of(self.summary), self.text]))


@dataclass(frozen=True)
class GitHubPublication:
    repository: str
    pull_request: int | None
    head_sha: str
    comment: CommentDocument
    review: ReviewDocument | None
    check_run: CheckRunDocument
