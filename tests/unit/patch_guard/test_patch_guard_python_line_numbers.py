"""The lines a patch adds, and the identifiers of a text, are numbered as Python numbers lines (the syntax tree's
numbers): a lone ``\\r`` ends a line to Python's tokenizer, not to git, which splits on ``\\n`` only."""

from __future__ import annotations

from libs.patch_guard.diff_parse import parse_diff
from libs.patch_guard.file_images import file_images
from libs.patch_guard.hunk_apply import apply_hunks_marking_added
from libs.patch_guard.identifier_scripts import identifiers
from services.repairer.unified_diff import render_unified_diff

LINES = [f"x{number} = {number}" for number in range(1, 9)]


def added(before: str, after: str) -> list[int]:
    [change] = parse_diff(render_unified_diff("a.py", before, after))
    text, numbers = apply_hunks_marking_added(before, change.hunks)
    assert text == after
    return sorted(numbers)


def test_a_file_whose_lines_end_in_lf_keeps_git_s_numbers() -> None:
    before = "\n".join(LINES) + "\n"
    assert added(before, before.replace("x5 = 5\n", "x5 = 50\nx55 = 55\n")) == [5, 6]


def test_in_a_file_whose_lines_end_in_cr_only_the_python_lines_the_patch_changes_are_added() -> None:
    """The whole file is one line to git, removed and added; of its Python lines, the fifth changes and one is new."""
    before = "\r".join(LINES) + "\r"
    assert added(before, before.replace("x5 = 5\r", "x5 = 50\rx55 = 55\r")) == [5, 6]
    assert added(before, before.replace("x2 = 2\r", "").replace("x7 = 7\r", "x7 = 70\r")) == [6]


def test_in_a_file_of_mixed_endings_each_line_is_numbered_as_python_reads_it() -> None:
    """Lines 1-4 end in ``\\r`` (one line to git), 5-8 in ``\\n``: an edit of line 7 is Python's line 7, not git's."""
    before = "\r".join(LINES[:4]) + "\r" + "\n".join(LINES[4:]) + "\n"
    assert added(before, before.replace("x7 = 7\n", "x7 = 70\n")) == [7]
    assert added(before, before.replace("x2 = 2\r", "x2 = 20\r")) == [2]


def test_a_created_file_s_lines_are_counted_as_python_counts_them() -> None:
    patch = "--- /dev/null\n+++ b/a.py\n@@ -0,0 +1 @@\n+a = 1\rb = 2\rc = 3\n"
    [image] = file_images(parse_diff(patch), None)
    assert sorted(image.added_lines) == [1, 2, 3]


def test_identifiers_are_numbered_as_python_numbers_lines() -> None:
    assert list(identifiers("a = 1\rb = 2\r")) == [(1, "a"), (2, "b")]
    assert list(identifiers("a = 1\r\nb = 2\r\n")) == [(1, "a"), (2, "b")]
    assert list(identifiers("a = 1\nb = 2\x0cc = 3\n")) == [(1, "a"), (2, "b"), (2, "c")]
