"""Scratch paths taken out of a trial's failure text (a workspace command's stderr tail, its argv in a timeout or a
refusal: the pull request's text, the argv of any length its policy gives). The one regex that did it,
``(?:/[\\w.-]+)*/(?:tmp…)(?:/[\\w.-]+)*``, was tried from every ``/`` and ran over every path segment after it: a
text like ``/a/a/a…`` took quadratic time (32 KB, 5 s). Paths are now found once each and their segments looked at
once; the texts come out as the old regex made them, which a differential test over random small texts shows."""

from __future__ import annotations

import random
import re

import pytest

from services.diagnoser.trials.scratch_paths import without_scratch_paths

OLD_SCRATCH_PATH = re.compile(r"(?:/[\w.-]+)*/(?:modelguard[\w-]*[-_]\w{6,}|tmp\w{8}|tmp[\w-]*[-_]\w{6,})(?:/[\w.-]+)*")
"""The pattern before the fix, as it was."""

PIECES = [
    "/",
    "/",
    "/",
    "a",
    "tmp",
    "/tmp",
    "/modelguard",
    "-",
    "_",
    ".",
    "x1",
    "abcdef",
    "12345678",
    " ",
    ":",
    "\n",
    "é",
    "//",
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cannot open /tmp/modelguard-run-abc123/data/train.csv", "cannot open <scratch>"),
        ("/tmp/tmpa1b2c3d4/x.py:3: error", "<scratch>:3: error"),
        ("in /var/tmp/modelguard-features-9f8e7d6c/features.csv, row 2", "in <scratch>, row 2"),
        ("/home/me/project/model.py failed", "/home/me/project/model.py failed"),
        ("/tmp12345678.txt", "<scratch>.txt"),
    ],
)
def test_scratch_paths_are_replaced(text: str, expected: str) -> None:
    assert without_scratch_paths(text) == expected


def test_a_long_path_text_is_read_through() -> None:
    # 32 KB of "/a" took the old regex 5 s, and four times that sixteen times as long; an argv may be as long as
    # the policy makes it
    segments = "/a" * 300_000
    assert without_scratch_paths(segments) == segments
    assert without_scratch_paths(f"{segments} {segments}/tmp/modelguard-run-abc123/x {segments}/b") == (
        f"{segments} <scratch> {segments}/b"
    )


def test_random_small_texts_come_out_as_the_old_pattern_made_them() -> None:
    rng = random.Random("scratch-paths")
    replaced = 0
    for _ in range(30_000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 14)))
        expected = OLD_SCRATCH_PATH.sub("<scratch>", text)
        assert without_scratch_paths(text) == expected, text
        replaced += expected != text
    assert replaced > 1000  # enough of the texts hold a scratch path for the comparison to mean something
