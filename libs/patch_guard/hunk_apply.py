"""A file's text after a patch, computed in memory from its text before (nothing is written).

Hunks are placed where their old side matches the file exactly, at the line they name or, like
``git apply``, at the nearest offset that matches; context is never fuzzed. Lines are split on ``\\n``
only, as git splits them, so a ``\\r`` inside a line stays inside it.
"""

from __future__ import annotations

from collections.abc import Sequence

from libs.patch_guard.diff_parse import Hunk


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
    """The text after the hunks, and the numbers of its lines the hunks add (where they really landed,
    which is not always the line a hunk header names)."""
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
    return "".join(result), frozenset(added)


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
