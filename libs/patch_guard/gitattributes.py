"""Whether a workspace's ``.gitattributes`` files mark a path as generated (``linguist-generated``, or
GitLab's ``gitlab-generated``), read the way git reads them.

Every ``.gitattributes`` from the workspace root down to the path's folder applies, a deeper file after a
shallower one and a later line after an earlier one; the last line that sets or unsets the attribute wins
(``attr``, ``attr=true`` set it; ``-attr``, ``!attr``, ``attr=false`` unset it). A pattern without a ``/``
matches a file name at any depth below its ``.gitattributes``; one with a ``/`` is relative to it; as in
git, a folder pattern (``gen/``) marks no file, ``gen/**`` marks the files below it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from libs.patch_guard.globs import matches_glob

ATTRIBUTES = ("linguist-generated", "gitlab-generated")
FILE_NAME = ".gitattributes"


def generated_by_attributes(path: str, read: Callable[[str], str | None]) -> str | None:
    """Where ``path`` is marked generated (``.gitattributes: pattern attribute``), or None. ``read`` gives
    the text of a workspace file, or None when there is none (or it cannot be read safely)."""
    parts = PurePosixPath(path).parts
    marked: str | None = None
    for depth in range(len(parts)):
        folder = "/".join(parts[:depth])
        source = f"{folder}/{FILE_NAME}" if folder else FILE_NAME
        text = read(source)
        if text is None:
            continue
        relative = "/".join(parts[depth:])
        for line in text.splitlines():
            verdict = _line_verdict(line, relative)
            if verdict is not None:
                marked = f"{source}: {line.strip()}" if verdict else None
    return marked


def _line_verdict(line: str, relative: str) -> bool | None:
    """True when the line marks ``relative`` generated, False when it unmarks it, None when silent."""
    fields = line.split()
    if not fields or fields[0].startswith("#") or not _matches(fields[0], relative):
        return None
    verdict: bool | None = None
    for field in fields[1:]:
        name, _, value = field.lstrip("-!").partition("=")
        if name not in ATTRIBUTES:
            continue
        unset = field.startswith(("-", "!")) or value.lower() == "false"
        verdict = not unset
    return verdict


def _matches(pattern: str, relative: str) -> bool:
    """As git matches an attributes pattern: a folder pattern never matches the files inside it (that takes
    ``folder/**``)."""
    if pattern.endswith("/"):
        return False
    if "/" not in pattern:
        return matches_glob(relative, f"**/{pattern}")
    return matches_glob(relative, pattern.removeprefix("/"))
