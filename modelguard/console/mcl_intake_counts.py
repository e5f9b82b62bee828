"""The MCL intake's counts for the Operations page, read from the context service's ``/metrics``.

The context service keeps its counts in its mirror, which lives in its own state (a file on its own volume); what
it publishes of them to everyone is ``modelguard_mcl_records_total{verdict,reason}`` on its health port
(``services/context/mcl_metrics.py``). The console reads that, so a console in its own pod needs only to reach
the context service's port 8080 (the Helm chart's modelguard-context Service, templates/console.yaml), and never
another service's files.

The answer is read as untrusted text: at most ``MAX_BYTES``, within ``TIMEOUT_S``, no redirect followed, and of it
only the one family, each count a whole non-negative number and each reason cut to ``MAX_REASON`` characters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import httpx
from prometheus_client.parser import text_string_to_metric_families

MCL_RECORDS = "modelguard_mcl_records"
"""The family ``services/context/mcl_metrics.py`` serves (a counter: its samples are ``…_total``)."""
TOTAL = f"{MCL_RECORDS}_total"
VERDICTS = ("applied", "skipped", "dead_lettered")
TIMEOUT_S = 3.0
MAX_BYTES = 2 * 1024 * 1024
MAX_REASON = 128
MAX_REASONS = 200


class CountsUnreadable(ValueError):
    """The counts cannot be read; the message is one line for the page."""


@dataclass(frozen=True)
class IntakeCounts:
    applied: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    dead_lettered: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.applied + sum(self.skipped.values()) + sum(self.dead_lettered.values())

    def rows(self) -> list[tuple[str, str, int]]:
        """(verdict, reason, count): applied first, then each skip and dead-letter reason, the most first."""
        rows = [("applied", "", self.applied)]
        for verdict, by_reason in (("skipped", self.skipped), ("dead_lettered", self.dead_lettered)):
            rows += [(verdict, r, n) for r, n in sorted(by_reason.items(), key=lambda item: (-item[1], item[0]))]
        return rows


@dataclass(frozen=True)
class IntakeReading:
    """Where the counts were looked for, and the counts or the one line that says why there are none."""

    source: str | None
    counts: IntakeCounts | None = None
    problem: str | None = None


def counts_from_exposition(text: str) -> IntakeCounts:
    """The ``modelguard_mcl_records`` family of a Prometheus text exposition. Raises CountsUnreadable."""
    try:
        samples = [s for f in text_string_to_metric_families(text) for s in f.samples if s.name == TOTAL]
    except (ValueError, IndexError, TypeError) as exc:
        raise CountsUnreadable(f"not Prometheus text ({type(exc).__name__})") from None
    if not samples:
        raise CountsUnreadable(f"no {TOTAL} in it (is it the context service's /metrics?)")
    applied, by_verdict = 0, {"skipped": dict[str, int](), "dead_lettered": dict[str, int]()}
    for sample in samples:
        verdict, reason = sample.labels.get("verdict", ""), sample.labels.get("reason", "")[:MAX_REASON]
        if verdict not in VERDICTS:
            raise CountsUnreadable(f"an unknown verdict {verdict[:40]!r}")
        value = sample.value
        if not math.isfinite(value) or value < 0 or value != int(value):
            raise CountsUnreadable(f"a count that is not a whole number: {value!r}")
        if verdict == "applied":
            applied += int(value)
            continue
        reasons = by_verdict[verdict]
        if reason not in reasons and len(reasons) >= MAX_REASONS:
            raise CountsUnreadable(f"more than {MAX_REASONS} {verdict} reasons")
        reasons[reason] = reasons.get(reason, 0) + int(value)
    return IntakeCounts(applied, by_verdict["skipped"], by_verdict["dead_lettered"])


def read_intake_counts(url: str, timeout_s: float = TIMEOUT_S) -> IntakeReading:
    """GET the URL (a ``/metrics``) and read the counts from it; any failure is one line in the reading."""
    try:
        with (
            httpx.Client(timeout=timeout_s, follow_redirects=False, trust_env=False) as client,
            client.stream("GET", url, headers={"Accept": "text/plain"}) as response,
        ):
            if response.status_code != 200:
                return IntakeReading(url, problem=f"{url} answered HTTP {response.status_code}")
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_BYTES:
                    return IntakeReading(url, problem=f"{url} answered more than {MAX_BYTES} bytes")
    except httpx.HTTPError as exc:
        return IntakeReading(url, problem=f"{url} does not answer ({type(exc).__name__})")
    try:
        return IntakeReading(url, counts_from_exposition(body.decode("utf-8", errors="replace")))
    except CountsUnreadable as exc:
        return IntakeReading(url, problem=f"{url} answered, but {exc}")
