"""Glob matching on relative POSIX paths, with ``**`` for any number of folders.

``*`` and ``?`` never cross a ``/`` (unlike :func:`fnmatch.fnmatch`), so ``pkg/*.py`` does not match
``pkg/sub/x.py``; ``**/`` also matches no folder at all, so ``**/conftest.py`` matches a top-level
``conftest.py``; a trailing ``/**`` matches everything below the folder. ``casefold=True`` compares
without case, for protected paths on case-insensitive file systems (``Tests/`` is ``tests/`` there).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


def matches_any(path: str, patterns: Iterable[str], *, casefold: bool = False) -> str | None:
    """The first pattern that matches ``path``, or None."""
    return next((pattern for pattern in patterns if matches_glob(path, pattern, casefold=casefold)), None)


def matches_glob(path: str, pattern: str, *, casefold: bool = False) -> bool:
    return _compiled(pattern, casefold).fullmatch(path) is not None


@lru_cache(maxsize=1024)
def _compiled(pattern: str, casefold: bool) -> re.Pattern[str]:
    parts: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            parts.append(".*")
            index += 2
        elif pattern[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(parts), re.DOTALL | (re.IGNORECASE if casefold else 0))
