"""GitHub suggestions from a unified diff: per hunk, the candidate file's line range and the lines replacing it.

A suggestion on a pull request replaces lines of the head commit's file (the RIGHT side). The validated patch
was computed against that same file (the candidate commit), so the patch's old side *is* the RIGHT side: a
hunk's changed span in old-file line numbers is the range to comment on, and the new lines of that span are
the suggestion. A pure insertion has no old line to replace, so the span is widened to the context line before
it (or after it, at the top of a file) and that line is repeated in the suggestion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class UnsuggestableDiff(ValueError):
    """The diff cannot be turned into line suggestions (malformed, a new or deleted file, no hunks)."""


@dataclass(frozen=True)
class Suggestion:
    path: str
    start_line: int
    line: int
    replacement: tuple[str, ...]

    def comment_body(self) -> str:
        fence = "```"
        while any(fence in text for text in self.replacement):
            fence += "`"
        return "\n".join([f"{fence}suggestion", *self.replacement, fence]) + "\n"


@dataclass(frozen=True)
class _Line:
    kind: str  # " " context, "-" removed, "+" added
    old_number: int | None
    text: str


def _path(header: str, prefix: str) -> str | None:
    raw = header[4:].split("\t", 1)[0].strip()
    if raw == "/dev/null":
        return None
    return raw[len(prefix) :] if raw.startswith(prefix) else raw


def _read_hunk(lines: list[str], index: int, match: re.Match[str]) -> tuple[list[_Line], int]:
    old_number = int(match.group(1))
    old_left = int(match.group(2)) if match.group(2) is not None else 1
    new_left = int(match.group(4)) if match.group(4) is not None else 1
    hunk: list[_Line] = []
    while old_left > 0 or new_left > 0:
        if index >= len(lines):
            raise UnsuggestableDiff("diff ends inside a hunk")
        line = lines[index]
        index += 1
        kind, text = line[:1] or " ", line[1:]
        if kind == "\\":
            continue
        if kind == "+" and new_left > 0:
            hunk.append(_Line("+", None, text))
            new_left -= 1
        elif kind == "-" and old_left > 0:
            hunk.append(_Line("-", old_number, text))
            old_number, old_left = old_number + 1, old_left - 1
        elif kind == " " and old_left > 0 and new_left > 0:
            hunk.append(_Line(" ", old_number, text))
            old_number, old_left, new_left = old_number + 1, old_left - 1, new_left - 1
        else:
            raise UnsuggestableDiff(f"unexpected line in hunk: {line[:80]!r}")
    while index < len(lines) and lines[index].startswith("\\"):
        index += 1
    return hunk, index


def _suggestion(path: str, hunk: list[_Line]) -> Suggestion | None:
    changed = [i for i, line in enumerate(hunk) if line.kind != " "]
    if not changed:
        return None
    first, last = changed[0], changed[-1]
    if not any(line.kind == "-" for line in hunk[first : last + 1]):
        if first > 0:
            first -= 1
        elif last + 1 < len(hunk):
            last += 1
        else:
            raise UnsuggestableDiff(f"{path}: an insertion into an empty file has no line to comment on")
    span = hunk[first : last + 1]
    numbers = [line.old_number for line in span if line.old_number is not None]
    replacement = tuple(line.text for line in span if line.kind != "-")
    return Suggestion(path, min(numbers), max(numbers), replacement)


def suggestions_from_diff(diff: str) -> list[Suggestion]:
    lines = diff.splitlines()
    suggestions: list[Suggestion] = []
    index = 0
    while index < len(lines):
        if not lines[index].startswith("--- "):
            index += 1
            continue
        if index + 1 >= len(lines) or not lines[index + 1].startswith("+++ "):
            raise UnsuggestableDiff("'---' header without '+++'")
        old_path, new_path = _path(lines[index], "a/"), _path(lines[index + 1], "b/")
        if old_path is None or new_path is None or old_path != new_path:
            raise UnsuggestableDiff("only edits of an existing file can be suggested")
        index += 2
        while index < len(lines) and (match := HUNK_HEADER.match(lines[index])):
            hunk, index = _read_hunk(lines, index + 1, match)
            if (suggestion := _suggestion(new_path, hunk)) is not None:
                suggestions.append(suggestion)
    if not suggestions:
        raise UnsuggestableDiff("the diff has no hunks")
    return suggestions
