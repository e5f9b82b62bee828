"""Unified diffs, both ways: render one file's edit as ``git apply``-able text, and parse diff text into
per-file added/removed lines (strictly, by hunk counts, so a removed line that starts with ``--`` is
never mistaken for a header)."""

from __future__ import annotations

import difflib
import re

from pydantic import BaseModel, ConfigDict

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
NO_NEWLINE_MARKER = "\\ No newline at end of file"
DEV_NULL = "/dev/null"


class MalformedDiff(ValueError):
    """The text is not a well-formed unified diff."""


class FilePatch(BaseModel):
    model_config = ConfigDict(frozen=True)

    old_path: str | None
    new_path: str | None
    added: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def path(self) -> str:
        path = self.new_path or self.old_path
        assert path is not None
        return path


def render_unified_diff(path: str, before: str, after: str) -> str:
    """``--- a/<path>`` / ``+++ b/<path>`` diff of one file, with git's marker for a missing final newline."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE_MARKER}\n" for line in lines)


def parse_unified_diff(text: str) -> list[FilePatch]:
    lines = text.splitlines()
    patches: list[FilePatch] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith("--- "):
            if HUNK_HEADER.match(line):
                raise MalformedDiff(f"hunk without a file header at line {index + 1}")
            index += 1
            continue
        if index + 1 >= len(lines) or not lines[index + 1].startswith("+++ "):
            raise MalformedDiff(f"'---' header without '+++' at line {index + 1}")
        old_path, new_path = _header_path(line, "a/"), _header_path(lines[index + 1], "b/")
        index += 2
        added: list[str] = []
        removed: list[str] = []
        while index < len(lines) and (match := HUNK_HEADER.match(lines[index])):
            index = _read_hunk(lines, index + 1, match, added, removed)
        if not added and not removed:
            raise MalformedDiff(f"file {new_path or old_path} has no hunks")
        patches.append(FilePatch(old_path=old_path, new_path=new_path, added=tuple(added), removed=tuple(removed)))
    return patches


def _read_hunk(lines: list[str], index: int, match: re.Match[str], added: list[str], removed: list[str]) -> int:
    old_left = int(match.group(2)) if match.group(2) is not None else 1
    new_left = int(match.group(4)) if match.group(4) is not None else 1
    while old_left > 0 or new_left > 0:
        if index >= len(lines):
            raise MalformedDiff("diff ends inside a hunk")
        line = lines[index]
        if line.startswith("\\"):
            index += 1
            continue
        marker, content = line[:1], line[1:]
        if marker == "+" and new_left > 0:
            added.append(content)
            new_left -= 1
        elif marker == "-" and old_left > 0:
            removed.append(content)
            old_left -= 1
        elif marker in (" ", "") and old_left > 0 and new_left > 0:
            old_left -= 1
            new_left -= 1
        else:
            raise MalformedDiff(f"unexpected line in hunk at line {index + 1}: {line[:80]!r}")
        index += 1
    while index < len(lines) and lines[index].startswith("\\"):
        index += 1
    return index


def _header_path(line: str, prefix: str) -> str | None:
    raw = line[4:].split("\t", 1)[0].strip()
    if raw == DEV_NULL:
        return None
    return raw[len(prefix) :] if raw.startswith(prefix) else raw
