"""Find-then-act, again: when a create may or may not have happened, read GitHub and decide anew.

A POST that fails with a 5xx or a dropped connection may have taken effect. Repeating it blindly could
duplicate a comment; repeating the whole step (list, compare, act) finds the comment if it exists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from services.publisher.github_http import WriteOutcomeUnknown
from services.publisher.github_retry import RetryPolicy

T = TypeVar("T")


def retry_step(step: Callable[[bool], T], policy: RetryPolicy, sleep: Callable[[float], None]) -> T:
    """Run `step(wrote_before)`; `wrote_before` tells it a previous attempt may already have written."""
    wrote_before = False
    for attempt in range(1, policy.max_attempts + 1):
        try:
            return step(wrote_before)
        except WriteOutcomeUnknown:
            if attempt == policy.max_attempts:
                raise
            wrote_before = True
            sleep(policy.backoff(attempt))
    raise AssertionError("unreachable: the last attempt returns or raises")
