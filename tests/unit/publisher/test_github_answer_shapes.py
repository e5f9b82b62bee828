"""GitHub's answers in a shape the publisher does not read (a proxy's page, another Enterprise version, a broken
answer): each is a refused step with where it came from (``ChannelRejected``, a failed channel result), never an
AttributeError, KeyError, TypeError, AssertionError or RecursionError out of the handler."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from services.publisher.channel_errors import ChannelRejected
from services.publisher.finding import finding_of
from services.publisher.github_api import GitHubApi
from services.publisher.github_auth import StaticToken
from services.publisher.github_channel import LiveGitHub
from services.publisher.github_documents import Repository
from services.publisher.github_http import GitHubHttp
from services.publisher.github_retry import RetryPolicy
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_comment import render_content
from services.publisher.render_github import render_github
from services.publisher.secret_redaction import SecretRedactor
from tests.unit.publisher.publisher_inputs import INCIDENT, validated_payload

BASE = "https://api.github.test"
REPO = Repository.parse("acme/churn-model")
DEEP = "[" * 5000 + "]" * 5000


def _api(answer: Callable[[httpx.Request], httpx.Response]) -> GitHubApi:
    redactor = SecretRedactor()
    http = GitHubHttp(
        BASE,
        StaticToken("ghp_unit-test-token", redactor),
        redactor,
        retry=RetryPolicy(max_attempts=1),
        sleep=lambda _: None,
        client=httpx.Client(transport=httpx.MockTransport(answer)),
    )
    return GitHubApi(http)


def _body(text: str, status: int = 200) -> Callable[[httpx.Request], httpx.Response]:
    return lambda _: httpx.Response(status, content=text.encode(), headers={"content-type": "application/json"})


WRONG_LISTINGS: list[tuple[str, str]] = [
    ("<html>Moved</html>", "not JSON"),
    (DEEP, "not JSON"),
    ('{"message": "Moved Permanently"}', "not a list"),
    ('["a comment"]', "an object"),
    ('[{"body": "x"}]', "integer id"),
    ('[{"id": "7", "body": "x"}]', "integer id"),
    ('[{"id": true, "body": "x"}]', "integer id"),
    ('[{"id": 7, "body": 5}]', "body"),
    ('[{"id": 7, "body": "x", "html_url": ["u"]}]', "html_url"),
]


@pytest.mark.parametrize(("text", "words"), WRONG_LISTINGS)
def test_a_listing_of_the_wrong_shape_is_refused_with_where_it_came_from(text: str, words: str) -> None:
    with pytest.raises(ChannelRejected, match=f"GitHub GET /repos/acme/churn-model/issues/7/comments: .*{words}"):
        _api(_body(text)).issue_comments(REPO, 7)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[{"id": 1}]', "not an object holding check_runs"),
        ('{"total_count": 0}', "not an object holding check_runs"),
        ('{"check_runs": "none"}', "not an object holding check_runs"),
        ('{"check_runs": [{"id": 1, "output": "text"}]}', "output"),
    ],
)
def test_a_check_run_listing_of_the_wrong_shape_is_refused(text: str, words: str) -> None:
    with pytest.raises(ChannelRejected, match=words):
        _api(_body(text)).check_runs(REPO, "a" * 40)


@pytest.mark.parametrize("text", ["[]", '"created"', "{}", '{"id": null}', "Created"])
def test_a_write_answered_in_the_wrong_shape_is_refused(text: str) -> None:
    with pytest.raises(ChannelRejected, match="GitHub POST /repos/acme/churn-model/issues/7/comments: "):
        _api(_body(text, 201)).create_comment(REPO, 7, "body", "label")


def test_a_refusal_nested_too_deeply_to_read_keeps_its_status() -> None:
    with pytest.raises(ChannelRejected, match="422 Unprocessable Entity") as refused:
        _api(_body(DEEP, 422)).create_comment(REPO, 7, "body", "label")
    assert refused.value.status == 422


def test_the_publication_fails_its_github_steps_instead_of_the_handler() -> None:
    finding = finding_of(INCIDENT, validated_payload())
    links = PublicationLinks(incident_id=INCIDENT, ledger_position=None)
    publication = render_github(finding, render_content(finding), links)
    assert publication is not None
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        shape: Any = {"message": "Moved Permanently"} if request.method == "GET" else ["created"]
        return httpx.Response(200, json=shape)

    api = _api(answer)
    results = LiveGitHub(api, api, retry=RetryPolicy(max_attempts=1), sleep=lambda _: None).publish(publication)
    assert [result.status for result in results] == ["failed"] * len(results) and len(results) >= 2
    assert not any(line.startswith(("POST", "PATCH", "DELETE")) for line in seen)
