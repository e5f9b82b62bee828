"""Glob matching on relative POSIX paths, with ``**`` for any number of folders.

``*`` and ``?`` never cross a ``/`` (unlike :func:`fnmatch.fnmatch`), so ``pkg/*.py`` does not match
``pkg/sub/x.py``; ``**/`` also matches no folder at all, so ``**/conftest.py`` matches a top-level
``conftest.py``; a trailing ``/**`` matches everything below the folder. ``casefold=True`` compares
without case, for protected paths on case-insensitive file systems (``Tests/`` is ``tests/`` there).

Patterns come from the workspace too (its ``.gitattributes``, a bundle's ``repair_paths``, a submitted policy's
``allowed_paths``) and paths from its pull request. A backtracking regex takes time to the power of the pattern's
wildcards on a path that almost matches (``*a*a*a*a*a*a*a*a*a*a*b`` against 40 ``a``: 15 s, two more: minutes), so a
pattern with more than ``MAX_REGEX_WILDCARDS`` wildcards is matched by simulating all its positions at once: time
proportional to the path's length times the pattern's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

MAX_REGEX_WILDCARDS = 2
"""Wildcards (``*``, ``**``, ``**/``) up to which the regex is used: its backtracking is then at worst quadratic
in the path's length, and the common patterns (``**/*.py``, ``tests/**``) keep the speed of a compiled regex."""

_ANY_FOLDERS = "**/"
_ANYTHING = "**"
_IN_NAME = "*"
_ONE_CHAR = "?"


def matches_any(path: str, patterns: Iterable[str], *, casefold: bool = False) -> str | None:
    """The first pattern that matches ``path``, or None."""
    return next((pattern for pattern in patterns if matches_glob(path, pattern, casefold=casefold)), None)


def matches_glob(path: str, pattern: str, *, casefold: bool = False) -> bool:
    compiled = _compiled(pattern, casefold)
    if compiled is not None:
        return compiled.fullmatch(path) is not None
    return _simulated(_tokens(pattern), path, casefold)


@lru_cache(maxsize=1024)
def _tokens(pattern: str) -> tuple[str, ...]:
    """``**/``, ``**``, ``*`` and ``?`` as themselves, every other character as a one-character literal."""
    tokens: list[str] = []
    index = 0
    while index < len(pattern):
        for token in (_ANY_FOLDERS, _ANYTHING):
            if pattern.startswith(token, index):
                break
        else:
            token = pattern[index]
        tokens.append(token)
        index += len(token)
    return tuple(tokens)


@lru_cache(maxsize=1024)
def _compiled(pattern: str, casefold: bool) -> re.Pattern[str] | None:
    """The pattern's regex; None for a pattern with more than ``MAX_REGEX_WILDCARDS`` wildcards."""
    tokens = _tokens(pattern)
    if sum(token in (_ANY_FOLDERS, _ANYTHING, _IN_NAME) for token in tokens) > MAX_REGEX_WILDCARDS:
        return None
    return re.compile("".join(_regex(token) for token in tokens), re.DOTALL | (re.IGNORECASE if casefold else 0))


def _regex(token: str) -> str:
    if token == _ANY_FOLDERS:
        return "(?:.*/)?"
    if token == _ANYTHING:
        return ".*"
    if token == _IN_NAME:
        return "[^/]*"
    if token == _ONE_CHAR:
        return "[^/]"
    return re.escape(token)


def _simulated(tokens: tuple[str, ...], path: str, casefold: bool) -> bool:
    """The regex's match, without backtracking: the set of pattern positions the path's prefix can reach. Position
    ``i`` is before token ``i``; ``-1 - i`` is inside the ``**/`` at ``i``, after a character and before its ``/``."""
    end = len(tokens)
    reached = _closure({0}, tokens)
    for char in path:
        following: set[int] = set()
        for position in reached:
            if position < 0:  # inside the **/ at -1 - position: any character stays, its / may end it
                following.add(position)
                if char == "/":
                    following.add(-position)  # the token after it
                continue
            if position == end:
                continue
            token = tokens[position]
            if token == _ANY_FOLDERS:
                following.add(-1 - position)
                if char == "/":
                    following.add(position + 1)
            elif token == _ANYTHING:
                following.add(position)
            elif token == _IN_NAME:
                if char != "/":
                    following.add(position)
            elif token == _ONE_CHAR:
                if char != "/":
                    following.add(position + 1)
            elif _same_char(token, char, casefold):
                following.add(position + 1)
        if not following:
            return False
        reached = _closure(following, tokens)
    return end in reached


def _closure(positions: set[int], tokens: tuple[str, ...]) -> set[int]:
    """``positions`` and every position after a run of wildcards that may match nothing."""
    closed = set(positions)
    for index, token in enumerate(tokens):
        if index in closed and token in (_ANY_FOLDERS, _ANYTHING, _IN_NAME):
            closed.add(index + 1)
    return closed


def _same_char(literal: str, char: str, casefold: bool) -> bool:
    if literal == char:
        return True
    return casefold and _one_char_ignoring_case(literal).fullmatch(char) is not None


@lru_cache(maxsize=1024)
def _one_char_ignoring_case(literal: str) -> re.Pattern[str]:
    """What ``re.IGNORECASE`` takes for this character (the regex's own case rules: ``K`` for the Kelvin sign)."""
    return re.compile(re.escape(literal), re.DOTALL | re.IGNORECASE)
