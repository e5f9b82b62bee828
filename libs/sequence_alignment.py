"""Aligning two sequences (lines, statements) as difflib's SequenceMatcher does without its junk heuristic, within a
budget of work.

Without the heuristic, SequenceMatcher's time grows with how often elements repeat: each search for the longest
match walks, for every element of one side, every place it occurs on the other, and a sequence of short repeated
lines makes it search once per tiny block. Two files of a few thousand alternating lines took over a minute; a
pull request is free to hold one. The budget counts those occurrences before each search (an upper bound of the
search's own loop), so an alignment that would cost more stops early. 20 million covers the ordinary edit of a
5,000-line module (4.7 million here) and stops the pathological case in under two seconds.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Hashable, Sequence
from difflib import Match, SequenceMatcher

WORK_BUDGET = 20_000_000

Opcode = tuple[str, int, int, int, int]


class _TooCostly(Exception):
    pass


class _BudgetedMatcher(SequenceMatcher[Hashable]):
    def __init__(self, a: Sequence[Hashable], b: Sequence[Hashable], budget: int) -> None:
        super().__init__(None, a, b, autojunk=False)
        in_b = Counter(b)  # how often each element occurs in b: the places the search walks for it (no junk here)
        self._work_before = list(itertools.accumulate((in_b[element] for element in a), initial=0))
        self._a_length = len(a)
        self._left = budget

    def find_longest_match(self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None) -> Match:
        end = self._a_length if ahi is None else ahi
        self._left -= self._work_before[end] - self._work_before[alo]
        if self._left < 0:
            raise _TooCostly
        return super().find_longest_match(alo, end, blo, bhi)


def aligned_opcodes(a: Sequence[Hashable], b: Sequence[Hashable], budget: int = WORK_BUDGET) -> list[Opcode] | None:
    """``SequenceMatcher(None, a, b, autojunk=False).get_opcodes()``, or None when aligning would cost more than
    ``budget``."""
    try:
        return list(_BudgetedMatcher(a, b, budget).get_opcodes())
    except _TooCostly:
        return None
