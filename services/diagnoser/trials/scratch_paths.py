"""Paths inside temporary folders, taken out of a trial's failure text so that reports are stable.

The text is the workspace's (a command's stderr tail, its argv in a timeout or a refusal). The one regex this was,
``(?:/[\\w.-]+)*/(?:<scratch folder>)(?:/[\\w.-]+)*``, was tried from every ``/`` and ran over every segment after
it: quadratic in a path's segments (32 KB of ``/a`` took 5 s). Here each path is found once (``PATH``, a run of
``/segment``), and its segments are looked at once each, last first, for a scratch folder's name at a segment's
start (``SCRATCH_FOLDER``, which cannot cross a ``/``); the text comes out as that regex made it: from the path's
start through the last segment that begins with a scratch folder's name is ``<scratch>``, and so is the rest of
the path when the name is the whole segment."""

from __future__ import annotations

import re

PATH = re.compile(r"(?:/[\w.-]+)+")
"""One path: ``/segment`` after ``/segment``, as long as it goes (a ``//`` or any other character ends it)."""
SCRATCH_FOLDER = re.compile(r"modelguard[\w-]*[-_]\w{6,}|tmp\w{8}|tmp[\w-]*[-_]\w{6,}")
"""A temporary folder's name (``modelguard-run-abc123``, ``tmpa1b2c3d4``) at the start of a segment."""
REPLACEMENT = "<scratch>"


def without_scratch_paths(text: str) -> str:
    """``text`` with each path inside a temporary folder (``/tmp/modelguard-run-abc123/...``) as ``<scratch>``."""
    return PATH.sub(_without_scratch_folder, text)


def _without_scratch_folder(path: re.Match[str]) -> str:
    found = path.group()
    start = len(found)
    while (start := found.rfind("/", 0, start)) >= 0:
        name = SCRATCH_FOLDER.match(found, start + 1)
        if name is not None:
            rest = found[name.end() :]
            return REPLACEMENT if rest[:1] in ("", "/") else REPLACEMENT + rest
    return found
