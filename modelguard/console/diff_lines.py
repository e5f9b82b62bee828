"""A unified diff as lines, each with its kind, for the patch's rendering (the text stays text: escaped)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DiffLine:
    kind: str
    """"file", "hunk", "add", "remove" or "context"."""
    text: str


def diff_lines(diff: str) -> list[DiffLine]:
    lines = []
    for text in diff.splitlines():
        if text.startswith(("--- ", "+++ ", "diff ", "index ")):
            kind = "file"
        elif text.startswith("@@"):
            kind = "hunk"
        elif text.startswith("+"):
            kind = "add"
        elif text.startswith("-"):
            kind = "remove"
        else:
            kind = "context"
        lines.append(DiffLine(kind, text))
    return lines
