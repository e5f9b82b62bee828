"""GitHub's REST API over httpx: credentials, retries with backoff, rate limits, pagination, redaction.

`clock` (epoch seconds) and `sleep` are injected so tests run without waiting. Errors carry the method, the
path and GitHub's own short message, redacted; never headers, never bodies we sent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from libs.canonical_json import strict_loads
from libs.version import MODELGUARD_VERSION
from services.publisher.channel_errors import ChannelRejected, ChannelUnavailable
from services.publisher.github_answers import answer_json, listing_page
from services.publisher.github_auth import GitHubCredentials
from services.publisher.github_retry import (
    SERVER_ERRORS,
    RetryPolicy,
    is_rate_limited,
    may_repeat_after_server_error,
    rate_limit_wait,
)
from services.publisher.secret_redaction import SecretRedactor

log = logging.getLogger(__name__)
API_VERSION = "2022-11-28"
PAGE_SIZE = 100


class WriteOutcomeUnknown(ChannelUnavailable):
    """A non-idempotent request failed in a way that may have happened after GitHub acted on it."""


def _short_message(response: httpx.Response) -> str:
    try:
        document = strict_loads(response.content)
    except ValueError:
        return response.reason_phrase
    if not isinstance(document, dict):
        return response.reason_phrase
    message = str(document.get("message", response.reason_phrase))
    errors = document.get("errors")
    if isinstance(errors, list) and errors:
        message += " (" + "; ".join(str(e.get("message", e) if isinstance(e, dict) else e) for e in errors) + ")"
    return message[:300]


class GitHubHttp:
    def __init__(
        self,
        base_url: str,
        credentials: GitHubCredentials,
        redactor: SecretRedactor,
        *,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        client: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.credentials = credentials
        self.redactor = redactor
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.clock = clock
        self.client = client or httpx.Client(timeout=30.0, follow_redirects=False)
        self._origin = urlsplit(self.base_url)[:2]

    def _url(self, path_or_url: str) -> str:
        if "://" not in path_or_url:
            return self.base_url + path_or_url
        if urlsplit(path_or_url)[:2] != self._origin:  # never send credentials to another host
            raise ChannelRejected(f"refusing to follow a link away from {self.base_url}")
        return path_or_url

    def _headers(self, authorization: str | None) -> dict[str, str]:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"modelguard/{MODELGUARD_VERSION}",
        }
        if authorization:
            headers["Authorization"] = authorization
        return headers

    def _exchange(self, path: str, jwt: str) -> dict[str, Any]:
        """A request authenticated as the App itself (for installation tokens)."""
        answer = self._send("POST", path, json=None, params=None, authorization=f"Bearer {jwt}", retry_posts=True)
        document = answer_json(answer, f"GitHub POST {path}")
        return document if isinstance(document, dict) else {}

    def request(
        self,
        method: str,
        path_or_url: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> httpx.Response:
        authorization = self.credentials.authorization(self._exchange)
        return self._send(method, path_or_url, json=json, params=params, authorization=authorization)

    def _fail(self, error: type[Exception], text: str, **extra: Any) -> Exception:
        return error(self.redactor.redact(text), **extra)

    def _send(
        self,
        method: str,
        path_or_url: str,
        *,
        json: Any,
        params: Mapping[str, Any] | None,
        authorization: str | None,
        retry_posts: bool = False,
    ) -> httpx.Response:
        url = self._url(path_or_url)
        where = f"GitHub {method} {urlsplit(url).path}"
        repeatable = retry_posts or may_repeat_after_server_error(method)
        policy = self.retry
        for attempt in range(1, policy.max_attempts + 1):
            last = attempt == policy.max_attempts
            try:
                response = self.client.request(
                    method, url, json=json, params=params, headers=self._headers(authorization)
                )
            except httpx.TransportError as exc:
                if repeatable and not last:
                    log.info("%s: %s, retrying (attempt %d)", where, type(exc).__name__, attempt)
                    self.sleep(policy.backoff(attempt))
                    continue
                error = ChannelUnavailable if repeatable else WriteOutcomeUnknown
                raise self._fail(error, f"{where}: {type(exc).__name__}") from None
            status = response.status_code
            if status < 400:
                return response
            message = _short_message(response)
            headers = response.headers
            if is_rate_limited(status, headers, message):
                wait = rate_limit_wait(headers, message, self.clock(), policy.backoff(attempt))
                if not last and wait <= policy.max_delay_s:
                    log.info("%s: rate limited (%d), waiting %.1fs", where, status, wait)
                    self.sleep(wait)
                    continue
                raise self._fail(ChannelUnavailable, f"{where}: rate limited ({message})", retry_after_s=wait)
            if status in SERVER_ERRORS:
                if repeatable and not last:
                    log.info("%s: %d, retrying (attempt %d)", where, status, attempt)
                    self.sleep(policy.backoff(attempt))
                    continue
                error = ChannelUnavailable if repeatable else WriteOutcomeUnknown
                raise self._fail(error, f"{where}: {status} {message}")
            raise self._fail(ChannelRejected, f"{where}: {status} {message}", status=status)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        response = self.request("GET", path, params=params)
        return answer_json(response, f"GitHub GET {response.request.url.path}")

    def paginate(
        self, path: str, params: Mapping[str, Any] | None = None, items_key: str | None = None
    ) -> Iterator[Any]:
        """Every item of a listing, following `Link: rel="next"` to the last page."""
        url: str | None = path
        query: Mapping[str, Any] | None = {**(params or {}), "per_page": PAGE_SIZE}
        while url is not None:
            response = self.request("GET", url, params=query)
            where = f"GitHub GET {response.request.url.path}"
            yield from listing_page(answer_json(response, where), items_key, where)
            url = response.links.get("next", {}).get("url")
            query = None  # the next link carries its own query

    def close(self) -> None:
        self.client.close()
