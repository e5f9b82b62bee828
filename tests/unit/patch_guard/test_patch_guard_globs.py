"""Glob matching with patterns and paths a pull request writes: a `.gitattributes` line, a bundle's
``repair_paths``, a submitted policy's ``allowed_paths``, the diff's own paths. Same answers as the regex the
globs translate to; past two wildcards, one step per character of the path, whatever the pattern (counted, not
timed: a backtracking regex took 1.5 s to minutes on each hostile case below)."""

from __future__ import annotations

import random
import re

import pytest

from libs.patch_guard import globs
from libs.patch_guard.gitattributes import generated_by_attributes
from libs.patch_guard.globs import matches_any, matches_glob


def _regex_of(pattern: str, casefold: bool) -> re.Pattern[str]:
    """The translation the globs are specified by (docs of ``libs.patch_guard.globs``)."""
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


def test_many_wildcards_give_the_regexs_answers() -> None:
    """Random patterns on random short paths, with and without case, through ``matches_glob`` and through the
    simulation alone (which ``matches_glob`` uses past two wildcards): every answer is the regex's."""
    generator = random.Random(20261204)
    pieces = ["*", "**", "**/", "?", "a", "A", "b", "/", ".", "K", "\u212a", "\n"]
    checked = 0
    for _ in range(3_000):
        pattern = "".join(generator.choice(pieces) for _ in range(generator.randint(3, 9)))
        for _ in range(5):
            path = "".join(generator.choice("aAbk/.\n") for _ in range(generator.randint(0, 10)))
            for casefold in (False, True):
                expected = _regex_of(pattern, casefold).fullmatch(path) is not None
                assert matches_glob(path, pattern, casefold=casefold) is expected, (pattern, path, casefold)
                assert globs._simulated(globs._tokens(pattern), path, casefold) is expected, (pattern, path, casefold)
                checked += 1
    assert checked == 30_000


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        ("pkg/sub/x.py", "pkg/*.py", False),
        ("conftest.py", "**/conftest.py", True),
        ("a/b/c/conftest.py", "**/conftest.py", True),
        ("gen/a/b.py", "gen/**", True),
        ("Tests/x.py", "tests/**", False),
        ("a/b/c/d.py", "**/b/**/*.py", True),
        ("a/b/c/d.py", "**/b/**/*.txt", False),
        ("a/x_pb2.py", "*/*_*_*.py", False),
        ("a/x_pb2_grpc.py", "*/*_*_*.py", True),
        ("a/x_pb2_grpc.py", "**/*_*_*.py", True),
    ],
)
def test_the_usual_patterns(path: str, pattern: str, expected: bool) -> None:
    assert matches_glob(path, pattern) is expected
    assert (matches_any(path, ["nothing", pattern]) == pattern) is expected


def test_case_is_folded_as_the_regex_folds_it() -> None:
    assert matches_glob("Tests/A/b/x.py", "tests/**/*/*.py", casefold=True)
    assert matches_glob("\u212a/a/b/c", "k/**/*/*", casefold=True)  # the Kelvin sign is a k to re.IGNORECASE
    assert not matches_glob("Tests/A/b/x.py", "tests/**/*/*.py")


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("*a" * 10 + "*b", "a" * 40),
        ("*a" * 30 + "*b", "a" * 200),
        ("**/a" * 8 + "b", "a/" * 40),
        ("**a" * 10 + "b", "a" * 40),
        ("a/**/" * 8 + "b", "a/" * 40),
        ("?*" * 20 + "b", "a" * 255),
    ],
    ids=["names-40", "names-200", "any-folders", "anything", "folder-and-any-folders", "one-char-and-name"],
)
def test_a_pattern_built_to_backtrack_is_matched_in_one_step_per_character(
    pattern: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps: list[int] = []
    closure = globs._closure

    def counted(positions: set[int], tokens: tuple[str, ...]) -> set[int]:
        steps.append(len(positions))
        return closure(positions, tokens)

    monkeypatch.setattr(globs, "_closure", counted)
    assert globs._compiled(pattern, False) is None  # past two wildcards: not the regex
    assert not matches_glob(path, pattern)
    assert len(steps) <= len(path) + 1  # each step over at most every position of the pattern, twice
    assert max(steps) <= 2 * (len(globs._tokens(pattern)) + 1)


def test_a_hostile_gitattributes_line_is_answered_like_any_other() -> None:
    """A pull request adds a .gitattributes whose pattern nearly matches the path it changes."""
    files = {".gitattributes": "*a*a*a*a*a*a*a*a*a*a*b linguist-generated\n*.py linguist-generated\n"}
    path = "a" * 40 + ".py"
    assert globs._compiled("*a*a*a*a*a*a*a*a*a*a*b", False) is None
    assert generated_by_attributes(path, files.get) == ".gitattributes: *.py linguist-generated"
