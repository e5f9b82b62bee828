"""When to try a GitHub request again, and how long to wait first. Pure: no clock, no sleep.

- 429, or 403 that GitHub marks as a rate limit (`X-RateLimit-Remaining: 0`, or a "secondary rate limit"
  message): the request was not processed, so it is retried whatever its method; the wait honours
  `Retry-After`, else `X-RateLimit-Reset`, else (secondary limit) one minute, else backoff.
- 500, 502, 503, 504 and connection failures: retried with exponential backoff for idempotent methods. A POST
  may have taken effect before the error, so it is not repeated blindly: the caller re-reads and decides
  again (find-then-act), which is what keeps a retry from duplicating a comment.
- A wait longer than `max_delay_s` is not slept: the publication fails as unavailable and the bus retries it
  later.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"})
SERVER_ERRORS = frozenset({500, 502, 503, 504})
SECONDARY_LIMIT_WAIT_S = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 120.0

    def backoff(self, attempt: int) -> float:
        return min(self.base_delay_s * 2 ** (attempt - 1), self.max_delay_s)


def is_rate_limited(status: int, headers: Mapping[str, str], message: str) -> bool:
    if status == 429:
        return True
    if status != 403:
        return False
    return headers.get("x-ratelimit-remaining") == "0" or "secondary rate limit" in message.lower()


def rate_limit_wait(headers: Mapping[str, str], message: str, now_epoch_s: float, fallback_s: float) -> float:
    retry_after = headers.get("retry-after")
    if retry_after is not None:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            pass
    if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset"):
        try:
            return max(0.0, float(headers["x-ratelimit-reset"]) - now_epoch_s) + 1.0
        except ValueError:
            pass
    if "secondary rate limit" in message.lower():
        return SECONDARY_LIMIT_WAIT_S
    return fallback_s


def may_repeat_after_server_error(method: str) -> bool:
    return method.upper() in IDEMPOTENT_METHODS
