"""A file's text after a patch, computed in memory from its text before (nothing is written).

Hunks are placed where their old side matches the file exactly, at the line they name or, like
``git apply``, at the nearest offset that matches; context is never fuzzed. Lines are split on ``\\n``
only, as git splits them, so a ``\\r`` inside a line stays inside it. The lines the patch adds are numbered
as Python numbers them (its tokenizer also ends a line at a lone ``\\r``), so they name the syntax tree's lines.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from libs.patch_guard.diff_parse import Hunk
from libs.python_source.source_text import ends_lines_in_carriage_return, python_lines

MAX_ALIGNED_LINES = 1 << 22
"""Above this product of the changed runs' lengths (in Python lines), every line of the new run counts as added
rather than aligning the two runs line by line (which takes time in that product)."""


class HunkMismatch(ValueError):
    """A hunk's old side is not in the file."""


def split_lines(text: str) -> list[str]:
    """``text`` as lines that keep their ``\\n``; the last one may lack it."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def apply_hunks(before: str, hunks: Sequence[Hunk]) -> str:
    return apply_hunks_marking_added(before, hunks)[0]


def apply_hunks_marking_added(before: str, hunks: Sequence[Hunk]) -> tuple[str, frozenset[int]]:
    """The text after the hunks, and the numbers of its lines (as Python numbers them) the hunks add, where they
    really landed, which is not always the line a hunk header names."""
    lines = split_lines(before)
    result: list[str] = []
    added: set[int] = set()
    cursor = 0
    for number, hunk in enumerate(hunks, start=1):
        old = hunk.old_side()
        expected = hunk.old_start - 1 if hunk.old_count > 0 else hunk.old_start
        position = _nearest_match(lines, old, expected, cursor)
        if position is None:
            raise HunkMismatch(f"hunk {number} (line {hunk.old_start}) does not match the file")
        result.extend(lines[cursor:position])
        for line in hunk.lines:
            if line.marker == "-":
                continue
            result.append(line.with_ending)
            if line.marker == "+":
                added.add(len(result))
        cursor = position + len(old)
    result.extend(lines[cursor:])
    after = "".join(result)
    if not ends_lines_in_carriage_return(after):
        return after, frozenset(added)  # git's lines are Python's
    return after, python_added_lines(before, result, frozenset(added))


def python_added_lines(before: str, after_lines: list[str], added: frozenset[int]) -> frozenset[int]:
    """The Python line numbers of the added lines ``added`` (git's numbers of the lines ``after_lines``).

    A line of git's that holds several of Python's (they end in a lone ``\\r``) is added whole by a hunk: the whole
    of a file whose lines all end in ``\\r`` is one line to git. Of its Python lines, those the patch really changes
    count, found by aligning the file's Python lines before and after (outside a common start and end); a line of
    git's that is one line of Python's is added as the hunk says."""
    counts = [len(python_lines(line)) for line in after_lines]
    numbers: set[int] = set()
    several: set[int] = set()
    first = 1
    for git_number, count in enumerate(counts, start=1):
        if git_number in added:
            (numbers if count == 1 else several).update(range(first, first + count))
        first += count
    if several:
        numbers.update(several & _changed_lines(python_lines(before), python_lines("".join(after_lines))))
    return frozenset(numbers)


def _changed_lines(old: list[str], new: list[str]) -> set[int]:
    """The numbers (1-based) of the lines of ``new`` that are not an unchanged line of ``old``."""
    return {index + 1 for _, _, first, last in _changes(old, new) for index in range(first, last)}


def python_lines_changed(old: str, new: str) -> int:
    """How many of Python's lines ``old`` loses and ``new`` gains, aligned line by line (a hunk's two sides)."""
    return sum(
        old_last - old_first + last - first
        for old_first, old_last, first, last in _changes(python_lines(old), python_lines(new))
    )


def _changes(old: list[str], new: list[str]) -> list[tuple[int, int, int, int]]:
    """The runs ``old[a:b]`` replaced by ``new[c:d]`` (either may be empty), as (a, b, c, d): outside the common
    start and end, aligned by :mod:`difflib` unless the runs are too long, then one run replaced whole."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    old_run, new_run = old[start : len(old) - end], new[start : len(new) - end]
    if not old_run and not new_run:
        return []
    if len(old_run) * len(new_run) > MAX_ALIGNED_LINES:
        return [(start, start + len(old_run), start, start + len(new_run))]
    matcher = difflib.SequenceMatcher(None, old_run, new_run, autojunk=False)
    return [(start + a, start + b, start + c, start + d) for tag, a, b, c, d in matcher.get_opcodes() if tag != "equal"]


def created_text(hunks: Sequence[Hunk]) -> str:
    """The content of a file the patch creates."""
    return "".join(line for hunk in hunks for line in hunk.new_side())


def _nearest_match(lines: list[str], old: list[str], expected: int, cursor: int) -> int | None:
    last = len(lines) - len(old)
    candidates = range(cursor, last + 1)
    for position in sorted(candidates, key=lambda at: (abs(at - expected), at)):
        if lines[position : position + len(old)] == old:
            return position
    return None
