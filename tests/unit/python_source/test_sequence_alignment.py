"""`aligned_opcodes`: SequenceMatcher's alignment without its junk heuristic, bounded in work. Within the budget it
is SequenceMatcher's own answer; past it, None, early; and the repairer's statement revert refuses with a reason."""

from __future__ import annotations

import ast
import random
from difflib import SequenceMatcher

import pytest

from libs.python_source.source_text import SourceText
from libs.python_source.statement_revert import CannotRevert, revert_block
from libs.sequence_alignment import aligned_opcodes


def test_within_the_budget_the_answer_is_sequence_matchers() -> None:
    rng = random.Random(11)
    for _ in range(300):
        alphabet = rng.choice(("ab", "abcdef", "abcdefghijklmnopqrstuvwxyz"))
        a = [rng.choice(alphabet) for _ in range(rng.randint(0, 120))]
        b = [rng.choice(alphabet) for _ in range(rng.randint(0, 120))]
        assert aligned_opcodes(a, b) == SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def test_repeated_elements_past_the_budget_give_none() -> None:
    a, b = ["a", "b"] * 1_500, ["b", "c", "a"] * 1_500
    assert aligned_opcodes(a, b) is None
    assert aligned_opcodes(a[:20], b[:30]) == SequenceMatcher(None, a[:20], b[:30], autojunk=False).get_opcodes()


def test_a_statement_revert_of_blocks_too_costly_to_align_refuses() -> None:
    base = "def total(x):\n" + "    x += 1\n    x -= 1\n" * 1_500 + "    return x\n"
    candidate = "def total(x):\n" + "    x -= 1\n    x *= 2\n    x += 1\n" * 1_500 + "    return x\n"
    base_function, candidate_function = (ast.parse(text).body[0] for text in (base, candidate))
    assert isinstance(base_function, ast.FunctionDef) and isinstance(candidate_function, ast.FunctionDef)
    with pytest.raises(CannotRevert, match="work budget"):
        revert_block(SourceText(base), base_function.body, SourceText(candidate), candidate_function.body)
