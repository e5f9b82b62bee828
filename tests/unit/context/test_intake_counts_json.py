"""The MCL intake's counts read back from the JSON they were stored as; text that is not those counts reads as
empty counts, whatever Python's parser or int() raise on it (an OverflowError for a count of 1e999, a
RecursionError for nesting past the parser), never an exception out of the metrics collector."""

from __future__ import annotations

from collections import Counter

import pytest

from services.context.intake_counts import IntakeCounts


def test_stored_counts_read_back_as_they_were() -> None:
    counts = IntakeCounts(3, Counter({"aspect-not-mirrored": 1}), Counter({"mcl-bad-magic": 2}))
    assert IntakeCounts.from_json(counts.to_json()) == counts


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"applied": NaN, "skipped": {}, "dead_lettered": {}}',
        '{"applied": 1e999, "skipped": {}, "dead_lettered": {}}',
        '{"applied": -1e999, "skipped": {}, "dead_lettered": {}}',
        '{"applied": 1, "skipped": ' + "[" * 100_000 + "]" * 100_000 + ', "dead_lettered": {}}',
        "[" * 100_000 + "]" * 100_000,
        '{"applied": 1, "skipped": {"a": "x"}, "dead_lettered": {}}',
        '{"applied": 1, "skipped": {}, "dead_lettered": {"a": 1.5}}',
        '{"applied": 1, "skipped": ["a"], "dead_lettered": {}}',
        '{"applied": 1, "skipped": {"a": true}, "dead_lettered": {}}',
    ],
    ids=[
        "not-json",
        "nan",
        "infinite",
        "minus-infinite",
        "nested-count",
        "nested-document",
        "count-text",
        "count-float",
        "reasons-list",
        "count-bool",
    ],
)
def test_text_that_is_not_the_counts_reads_as_empty_counts(text: str) -> None:
    # 1e999 reads as infinity and int() of it was an OverflowError; nesting past the parser, a RecursionError:
    # both escaped from_json, which answers empty counts for any other text that does not read
    assert IntakeCounts.from_json(text) == IntakeCounts()
