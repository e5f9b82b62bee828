"""A GitHub App's installation token as GitHub's answer gives it: an answer without a token or with an
``expires_at`` that is not a time is a refused step naming the request it answered (``ChannelRejected``, a failed
channel result), never a ValueError out of the handler; a time without a zone is read as UTC, GitHub's zone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from services.publisher.channel_errors import ChannelRejected
from services.publisher.finding import finding_of
from services.publisher.github_api import GitHubApi
from services.publisher.github_auth import INSTALLATION_TOKEN_LIFETIME_S, REFRESH_MARGIN_S, AppInstallationToken
from services.publisher.github_channel import LiveGitHub
from services.publisher.github_http import GitHubHttp
from services.publisher.github_retry import RetryPolicy
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_comment import render_content
from services.publisher.render_github import render_github
from services.publisher.secret_redaction import SecretRedactor
from tests.unit.publisher.publisher_inputs import INCIDENT, validated_payload

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
WHERE = "GitHub POST /app/installations/99/access_tokens"
NOW = datetime(2026, 5, 10, 11, 0, tzinfo=UTC).timestamp()


def _credentials(clock: list[float]) -> AppInstallationToken:
    return AppInstallationToken("4242", KEY, 99, SecretRedactor(), lambda: clock[0])


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ({"expires_at": "2026-05-10T12:00:00Z"}, "without a token"),
        ({"token": 7, "expires_at": "2026-05-10T12:00:00Z"}, "without a token"),
        ({"token": "ghs_issued"}, "without an expires_at"),
        ({"token": "ghs_issued", "expires_at": 1778414400}, "without an expires_at"),
        ({"token": "ghs_issued", "expires_at": "tomorrow"}, "an expires_at of 'tomorrow', not an ISO 8601 time"),
        ({"token": "ghs_issued", "expires_at": ""}, "an expires_at of '', not an ISO 8601 time"),
        ({"token": "ghs_issued", "expires_at": "99999-01-01T00:00:00Z"}, "not an ISO 8601 time"),
        ({"token": "ghs_issued", "expires_at": "Sun, 10 May 2026 12:00:00 GMT"}, "not an ISO 8601 time"),
        ({"token": "ghs_issued", "expires_at": "2026-13-01T00:00:00Z"}, "not an ISO 8601 time"),
    ],
    ids=[
        "no-token",
        "token-not-text",
        "no-expiry",
        "expiry-a-number",
        "tomorrow",
        "empty",
        "year-99999",
        "http-date",
        "month-13",
    ],
)
def test_an_installation_token_answer_gives_a_refusal_naming_the_request(answer: dict[str, object], words: str) -> None:
    with pytest.raises(ChannelRejected, match=f"^{WHERE}: answered .*{words}") as refused:
        _credentials([NOW]).authorization(lambda path, jwt: answer)
    assert "ghs_issued" not in str(refused.value)


@pytest.fixture
def local_time_five_hours_west() -> Iterator[None]:
    """The process's local zone five hours behind UTC (a POSIX zone, no tz database needed), where reading a
    zoneless time as local time shows."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "EST+05")
        time.tzset()
        yield
    time.tzset()


def test_an_expiry_without_a_zone_is_read_as_utc_not_the_hosts_local_time(local_time_five_hours_west: None) -> None:
    # GitHub gives every time in UTC; a zoneless one was read in the host's zone: here five hours late
    clock = [NOW]
    answers: list[dict[str, object]] = [
        {"token": "ghs_first", "expires_at": "2026-05-10T12:00:00"},
        {"token": "ghs_second", "expires_at": "2026-05-10T13:00:00Z"},
    ]
    token, asked = _credentials(clock), list[str]()

    def exchange(path: str, jwt: str) -> dict[str, object]:
        asked.append(path)
        return answers.pop(0)

    assert token.authorization(exchange) == "Bearer ghs_first"
    clock[0] = datetime(2026, 5, 10, 12, tzinfo=UTC).timestamp() - REFRESH_MARGIN_S - 1
    assert token.authorization(exchange) == "Bearer ghs_first"
    clock[0] += 1  # five minutes before 12:00 UTC
    assert token.authorization(exchange) == "Bearer ghs_second"
    assert len(asked) == 2


def test_a_malformed_installation_token_answer_fails_the_github_steps_not_the_handler() -> None:
    finding = finding_of(INCIDENT, validated_payload())
    publication = render_github(finding, render_content(finding), PublicationLinks(INCIDENT, None))
    assert publication is not None
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        return httpx.Response(201, json={"token": "ghs_issued", "expires_at": "tomorrow"})

    redactor = SecretRedactor()
    http = GitHubHttp(
        "https://api.github.test",
        AppInstallationToken("4242", KEY, 99, redactor, time.time),
        redactor,
        retry=RetryPolicy(max_attempts=1),
        sleep=lambda _: None,
        client=httpx.Client(transport=httpx.MockTransport(answer)),
    )
    api = GitHubApi(http)
    results = LiveGitHub(api, api, retry=RetryPolicy(max_attempts=1), sleep=lambda _: None).publish(publication)
    assert [result.status for result in results] == ["failed"] * len(results) and len(results) >= 2
    assert set(seen) == {"POST /app/installations/99/access_tokens"}, "nothing asked with a token of no known expiry"


def test_an_expiry_further_off_than_an_installation_token_lives_is_held_to_an_hour() -> None:
    # GitHub's installation tokens live an hour; an answer saying 2999 kept one for good, so a token revoked since
    # (or one a middlebox answered) was sent on every request with no new one ever asked for
    clock = [NOW]
    answers: list[dict[str, object]] = [
        {"token": "ghs_first", "expires_at": "2999-01-01T00:00:00Z"},
        {"token": "ghs_second", "expires_at": "2999-01-01T00:00:00Z"},
    ]
    token = _credentials(clock)

    def exchange(path: str, jwt: str) -> dict[str, object]:
        return answers.pop(0)

    assert token.authorization(exchange) == "Bearer ghs_first"
    clock[0] = NOW + INSTALLATION_TOKEN_LIFETIME_S - REFRESH_MARGIN_S - 1
    assert token.authorization(exchange) == "Bearer ghs_first"
    clock[0] += 1
    assert token.authorization(exchange) == "Bearer ghs_second"
