"""Unified diffs, both ways: render one file's edit as ``git apply``-able text, and read diff text back as
per-file added/removed lines (with the patch guard's strict parser, ``libs/patch_guard/diff_parse.py``)."""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ConfigDict

from libs.patch_guard.diff_headers import MalformedDiff
from libs.patch_guard.diff_parse import parse_diff
from libs.patch_guard.hunk_apply import split_lines

NO_NEWLINE_MARKER = "\\ No newline at end of file"

__all__ = ["FilePatch", "MalformedDiff", "parse_unified_diff", "render_unified_diff"]


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
    """``--- a/<path>`` / ``+++ b/<path>`` diff of one file, with git's marker for a missing final newline.

    Lines are split on ``\\n`` only, as git splits them (``str.splitlines`` would also split on ``\\r``,
    form feeds and Unicode separators, and the diff would not apply)."""
    lines = difflib.unified_diff(split_lines(before), split_lines(after), f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE_MARKER}\n" for line in lines)


def parse_unified_diff(text: str) -> list[FilePatch]:
    return [
        FilePatch(old_path=change.old_path, new_path=change.new_path, added=change.added, removed=change.removed)
        for change in parse_diff(text)
    ]
