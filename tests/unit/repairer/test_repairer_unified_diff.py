"""Unified diff rendering and strict parsing."""

from __future__ import annotations

import pytest

from services.repairer.path_globs import matches_glob
from services.repairer.unified_diff import MalformedDiff, parse_unified_diff, render_unified_diff


def test_render_then_parse_counts_lines() -> None:
    text = render_unified_diff("pkg/a.py", "a\nb\nc\n", "a\nB\nc\nd\n")
    [patch] = parse_unified_diff(text)
    assert patch.path == "pkg/a.py"
    assert patch.added == ("B", "d") and patch.removed == ("b",)


def test_missing_final_newline_gets_git_marker() -> None:
    text = render_unified_diff("a.py", "x = 1", "x = 2")
    assert "\\ No newline at end of file\n" in text
    [patch] = parse_unified_diff(text)
    assert patch.added == ("x = 2",) and patch.removed == ("x = 1",)


def test_removed_line_that_looks_like_a_header_is_still_a_removed_line() -> None:
    text = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,1 @@\n--- not a header\n keep\n"
    [patch] = parse_unified_diff(text)
    assert patch.removed == ("-- not a header",)


def test_truncated_hunks_are_malformed() -> None:
    with pytest.raises(MalformedDiff):
        parse_unified_diff("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n keep\n")


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        ("churn_model/features.py", "churn_model/*.py", True),
        ("churn_model/sub/features.py", "churn_model/*.py", False),
        ("conftest.py", "**/conftest.py", True),
        ("a/b/conftest.py", "**/conftest.py", True),
        (".github/workflows/ci.yml", ".github/**", True),
        ("requirements-dev.txt", "**/requirements*.txt", True),
    ],
)
def test_globs(path: str, pattern: str, expected: bool) -> None:
    assert matches_glob(path, pattern) is expected
