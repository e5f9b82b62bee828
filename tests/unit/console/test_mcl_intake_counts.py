"""The Operations page reads the MCL intake's counts from the text the context service's /metrics serves: what
the context's own collector writes reads back the same, and an answer that is not that is refused in one line."""

from __future__ import annotations

import pytest

from libs.bus.prometheus import ServicePrometheus
from modelguard.console.mcl_intake_counts import MAX_REASON, CountsUnreadable, IntakeCounts, counts_from_exposition
from services.context.intake_counts import IntakeCounts as ContextCounts
from services.context.intake_counts import Outcome
from services.context.mcl_metrics import MclRecordsCollector


def _served(decided: list[tuple[Outcome, str]]) -> str:
    """The exposition of a context service whose intake decided these, as its health server serves it."""
    counts = ContextCounts()
    for outcome, reason in decided:
        counts.add(outcome, reason)
    collector = MclRecordsCollector(lambda: counts)
    return ServicePrometheus("context", [collector]).exposition().decode()  # type: ignore[list-item]


def test_what_the_context_service_serves_reads_back_as_its_counts() -> None:
    decided: list[tuple[Outcome, str]] = [
        ("applied", ""),
        ("applied", ""),
        ("applied", ""),
        ("skipped", "aspect-not-mirrored"),
        ("skipped", "older-timeseries-run"),
        ("skipped", "older-timeseries-run"),
        ("dead_lettered", "mcl-bad-magic"),
    ]
    counts = counts_from_exposition(_served(decided))
    assert counts == IntakeCounts(3, {"aspect-not-mirrored": 1, "older-timeseries-run": 2}, {"mcl-bad-magic": 1})
    assert counts.total == len(decided)
    assert counts.rows() == [
        ("applied", "", 3),
        ("skipped", "older-timeseries-run", 2),
        ("skipped", "aspect-not-mirrored", 1),
        ("dead_lettered", "mcl-bad-magic", 1),
    ]
    assert counts_from_exposition(_served([])) == IntakeCounts(0, {}, {})  # a context that has settled nothing


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("<html><script>alert(1)</script>", "not Prometheus text"),
        ("process_cpu_seconds_total 1.5\n", "no modelguard_mcl_records_total"),
        ('modelguard_mcl_records_total{verdict="applied",reason=""} -1\n', "not a whole number"),
        ('modelguard_mcl_records_total{verdict="applied",reason=""} 1.5\n', "not a whole number"),
        ('modelguard_mcl_records_total{verdict="applied",reason=""} NaN\n', "not a whole number"),
        ('modelguard_mcl_records_total{verdict="applied",reason=""} +Inf\n', "not a whole number"),
        ('modelguard_mcl_records_total{verdict="<b>x</b>",reason=""} 1\n', "an unknown verdict"),
    ],
)
def test_an_answer_that_is_not_the_counts_is_refused_in_one_line(text: str, said: str) -> None:
    with pytest.raises(CountsUnreadable, match=said) as refused:
        counts_from_exposition(text)
    assert "\n" not in str(refused.value)


def test_reasons_are_cut_and_bounded_in_number() -> None:
    long = "r" * 10_000
    counts = counts_from_exposition(f'modelguard_mcl_records_total{{verdict="skipped",reason="{long}"}} 4\n')
    assert counts.skipped == {"r" * MAX_REASON: 4}
    many = "".join(f'modelguard_mcl_records_total{{verdict="dead_lettered",reason="r{i}"}} 1\n' for i in range(201))
    with pytest.raises(CountsUnreadable, match="more than 200 dead_lettered reasons"):
        counts_from_exposition(many)
