"""Suggestions from a unified diff: the candidate file's line range (RIGHT side) and its replacement."""

from __future__ import annotations

import difflib

import pytest

from services.publisher.suggestion import Suggestion, UnsuggestableDiff, suggestions_from_diff
from tests.unit.publisher.publisher_inputs import FEATURES_BEFORE, features_diff


def _diff(before: str, after: str, path: str = "pkg/mod.py") -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}", n=2))


def test_an_insertion_replaces_the_line_before_it_with_that_line_and_the_new_ones() -> None:
    (suggestion,) = suggestions_from_diff(features_diff())
    assert (suggestion.path, suggestion.start_line, suggestion.line) == ("churn_model/features.py", 6, 6)
    assert FEATURES_BEFORE.splitlines()[5] == suggestion.replacement[0]  # line 6 of the candidate file
    assert suggestion.replacement[1] == "    months = months.where(months != 0)"


def test_a_replacement_spans_exactly_the_changed_lines() -> None:
    before = "".join(f"line {i}\n" for i in range(1, 21))
    after = before.replace("line 9\nline 10\n", "line nine\nline ten\nline ten and a half\n")
    (suggestion,) = suggestions_from_diff(_diff(before, after))
    assert (suggestion.start_line, suggestion.line) == (9, 10)
    assert suggestion.replacement == ("line nine", "line ten", "line ten and a half")


def test_a_deletion_suggests_nothing_in_place_of_the_lines() -> None:
    before = "".join(f"line {i}\n" for i in range(1, 11))
    (suggestion,) = suggestions_from_diff(_diff(before, before.replace("line 4\n", "")))
    assert (suggestion.start_line, suggestion.line, suggestion.replacement) == (4, 4, ())
    assert suggestion.comment_body() == "```suggestion\n```\n"


def test_each_hunk_is_its_own_suggestion_and_an_insertion_at_the_top_anchors_below() -> None:
    before = "".join(f"line {i}\n" for i in range(1, 41))
    after = "header\n" + before.replace("line 30\n", "line thirty\n")
    first, second = suggestions_from_diff(_diff(before, after))
    assert (first.start_line, first.line, first.replacement) == (1, 1, ("header", "line 1"))
    assert (second.start_line, second.line, second.replacement) == (30, 30, ("line thirty",))


def test_a_fence_inside_the_replacement_gets_a_longer_fence() -> None:
    body = Suggestion("a.md", 1, 1, ("```python", "x", "```")).comment_body()
    assert body.startswith("````suggestion\n") and body.endswith("\n````\n")


@pytest.mark.parametrize(
    "diff",
    ["", "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n", "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n x\n"],
)
def test_what_cannot_be_suggested_is_refused(diff: str) -> None:
    with pytest.raises(UnsuggestableDiff):
        suggestions_from_diff(diff)
