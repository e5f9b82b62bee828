"""GitHub's REST client: what is retried, what is not, how long it waits, and what it never says."""

from __future__ import annotations

import httpx
import pytest

from services.publisher.channel_errors import ChannelRejected, ChannelUnavailable
from services.publisher.github_auth import StaticToken
from services.publisher.github_http import GitHubHttp, WriteOutcomeUnknown
from services.publisher.github_retry import RetryPolicy, rate_limit_wait
from services.publisher.secret_redaction import SecretRedactor

TOKEN = "ghp_unit-test-secret-token"
BASE = "https://api.github.test"


def _client(
    answers: list[httpx.Response | Exception], seen: list[httpx.Request], sleeps: list[float] | None = None
) -> GitHubHttp:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    redactor = SecretRedactor()
    return GitHubHttp(
        BASE,
        StaticToken(TOKEN, redactor),
        redactor,
        retry=RetryPolicy(max_attempts=3, base_delay_s=1.0, max_delay_s=60.0),
        sleep=(sleeps if sleeps is not None else []).append,
        clock=lambda: 1000.0,
        client=httpx.Client(transport=httpx.MockTransport(handler)),
    )


@pytest.fixture
def sleeps() -> list[float]:
    return []


def test_reads_are_retried_with_backoff_after_server_errors_and_dropped_connections(sleeps: list[float]) -> None:
    seen: list[httpx.Request] = []
    answers: list[httpx.Response | Exception] = [
        httpx.Response(502),
        httpx.ConnectError("reset"),
        httpx.Response(200, json=[]),
    ]
    assert _client(answers, seen, sleeps).get_json("/repos/o/r/issues/1/comments") == []
    assert len(seen) == 3 and sleeps == [1.0, 2.0]
    assert seen[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert seen[0].headers["x-github-api-version"] == "2022-11-28"


def test_a_post_that_failed_with_a_server_error_is_not_repeated_blindly(sleeps: list[float]) -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(WriteOutcomeUnknown):
        _client([httpx.Response(502)], seen, sleeps).request("POST", "/repos/o/r/issues/1/comments", json={})
    assert len(seen) == 1 and sleeps == []


def test_a_rate_limited_post_was_not_processed_and_is_retried_after_the_reset(sleeps: list[float]) -> None:
    seen: list[httpx.Request] = []
    limited = httpx.Response(403, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1010"}, json={})
    _client([limited, httpx.Response(201, json={"id": 1})], seen, sleeps).request("POST", "/x", json={})
    assert len(seen) == 2 and sleeps == [11.0]


def test_refusals_are_not_retried_and_their_messages_are_redacted() -> None:
    seen: list[httpx.Request] = []
    answer = httpx.Response(401, json={"message": f"Bad credentials: {TOKEN}"})
    with pytest.raises(ChannelRejected) as raised:
        _client([answer], seen).get_json("/user")
    assert raised.value.status == 401 and TOKEN not in str(raised.value) and "[REDACTED]" in str(raised.value)


def test_pagination_follows_next_links_on_the_api_host_only() -> None:
    seen: list[httpx.Request] = []
    page1 = httpx.Response(200, json=[1, 2], headers={"link": f'<{BASE}/items?page=2>; rel="next"'})
    page2 = httpx.Response(200, json=[3])
    assert list(_client([page1, page2], seen).paginate("/items")) == [1, 2, 3]
    assert seen[0].url.params["per_page"] == "100" and seen[1].url.params["page"] == "2"

    elsewhere = httpx.Response(200, json=[1], headers={"link": '<https://evil.test/items?page=2>; rel="next"'})
    with pytest.raises(ChannelRejected):
        list(_client([elsewhere], []).paginate("/items"))


def test_waits_follow_retry_after_then_the_reset_then_the_secondary_limit_minute() -> None:
    assert rate_limit_wait({"retry-after": "5"}, "", 0.0, 1.0) == 5.0
    assert rate_limit_wait({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "100"}, "", 40.0, 1.0) == 61.0
    assert rate_limit_wait({}, "You have exceeded a secondary rate limit", 0.0, 1.0) == 60.0
    assert rate_limit_wait({}, "", 0.0, 4.0) == 4.0


def test_a_wait_beyond_the_budget_is_handed_to_the_bus(sleeps: list[float]) -> None:
    with pytest.raises(ChannelUnavailable) as raised:
        _client([httpx.Response(429, headers={"retry-after": "600"})], [], sleeps).get_json("/x")
    assert raised.value.retry_after_s == 300.0 and sleeps == []
