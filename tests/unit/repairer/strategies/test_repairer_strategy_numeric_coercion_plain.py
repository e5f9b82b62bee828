"""numeric_coercion's one-expression reading: where a per-value helper converts inside a ``try`` that catches
``ValueError`` (what is not a number takes the code's own fallback) and every formatted value the diagnosis saw
of the column reads plainly (currency signs and codes, spaces, "," grouping thousands, "." the decimal point),
the conversion site alone changes; no helper is added. Any other value seen (a decimal comma, dots grouping
thousands, an apostrophe), no value seen, or a conversion with no fallback of its own keeps the full helper."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from contracts.events.diagnosis import RepairHints
from services.repairer.strategies import numeric_coercion
from services.repairer.strategies.number_text_helper import TEXT_HELPER_LINES
from services.repairer.strategies.plain_number_text import reads_plainly
from tests.unit.repairer.strategies.patched_trees import (
    assert_guard_accepts,
    diff_lines,
    edit_of,
    git_applied,
    load_module,
    repair_context,
)

PARSING = "pkg/parsing.py"
PARSING_SOURCE = '''"""Row-level parsing helpers for TMS extracts; they never raise."""
import math


def parse_amount(value, default=0.0):
    """Amount in USD as float; `default` when the cell is empty or not a number."""
    if value is None:
        return default
    try:
        amount = float(value)
    except (TypeError, ValueError):
        return default
    if not math.isfinite(amount):
        return default
    return amount
'''
DESIGN = "pkg/design.py"
DESIGN_SOURCE = """import numpy as np

from .parsing import parse_amount


def quotes(rows: list[dict]) -> np.ndarray:
    return np.array([parse_amount(row.get("quoted_amount")) for row in rows], dtype=float)
"""
FILES = {PARSING: PARSING_SOURCE, DESIGN: DESIGN_SOURCE, "pkg/__init__.py": ""}
HINTS = RepairHints(text_numeric_columns=["quoted_amount"])
SEEN = {"quoted_amount": ("$1,019.54", "USD 845.00", "1,234.56 USD")}
PLAIN = (
    '+        amount = float(str(value).replace(",", "").strip(" $\\u20ac\\u00a3\\u00a5ABCDEFGHIJKLMNOPQRSTUVWXYZ"))'
)


def context_for(tmp_path: Path, seen: dict[str, tuple[str, ...]], files: dict[str, str] = FILES):  # type: ignore[no-untyped-def]
    return repair_context(tmp_path, files, hypothesis="type_conversion", hints=HINTS, number_examples=seen)


def test_the_conversion_site_alone_changes_when_every_value_seen_reads_plainly(tmp_path: Path) -> None:
    context = context_for(tmp_path, SEEN)
    edit = edit_of(numeric_coercion.propose(context))
    assert edit.files == (PARSING,)
    assert diff_lines(edit.unified_diff) == ["-        amount = float(value)", PLAIN]
    assert "one expression" in edit.rationale
    assert_guard_accepts(context, edit)
    parsing = load_module(git_applied(tmp_path, FILES, edit.unified_diff) / PARSING)
    cells = ["$1,234.56", "USD 845.00", "1,234.56", "845.00 EUR", " 12 ", "$-3.5", "", "n/a", None, 7, 2.5, math.nan]
    assert [parsing.parse_amount(cell) for cell in cells] == [
        1234.56,
        845.0,
        1234.56,
        845.0,
        12.0,
        -3.5,
        0.0,
        0.0,
        0.0,
        7.0,
        2.5,
        0.0,
    ]


@pytest.mark.parametrize("other", ["1.234,50", "\u20ac7,25", "1.234.567", "CHF 1'234.50", "12,5"])
def test_any_other_value_seen_keeps_the_full_helper(tmp_path: Path, other: str) -> None:
    edit = edit_of(numeric_coercion.propose(context_for(tmp_path, {"quoted_amount": (*SEEN["quoted_amount"], other)})))
    added = "\n".join(diff_lines(edit.unified_diff))
    assert "\n".join(f"+{line}" for line in TEXT_HELPER_LINES) in added
    assert diff_lines(edit.unified_diff)[-1] == "+        amount = float(_number_text(value))"


def test_without_values_seen_the_full_helper(tmp_path: Path) -> None:
    edit = edit_of(numeric_coercion.propose(context_for(tmp_path, {})))
    assert diff_lines(edit.unified_diff)[-1] == "+        amount = float(_number_text(value))"


def test_a_conversion_with_no_fallback_of_its_own_keeps_the_helper(tmp_path: Path) -> None:
    files = {
        **FILES,
        PARSING: PARSING_SOURCE.replace(
            "    try:\n        amount = float(value)\n    except (TypeError, ValueError):\n        return default\n",
            "    amount = float(value)\n",
        ),
    }
    edit = edit_of(numeric_coercion.propose(context_for(tmp_path, SEEN, files)))
    assert diff_lines(edit.unified_diff)[-1] == "+    amount = float(_parse_number_text(value))"


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("$1,234.56", True),
        ("USD 845.00", True),
        ("845.00 EUR", True),
        ("1,234,567", True),
        ("1,234", True),
        (" 12 ", True),
        ("\u00a3 9.99", True),
        ("1.234,5", False),
        ("7,25", False),
        ("1,23", False),
        ("1.234.567", False),
        ("1'234.50", False),
        ("1 234.50", False),
        ("12 %", False),
        ("n/a", False),
        ("", False),
    ],
)
def test_which_values_read_plainly(text: str, plain: bool) -> None:
    assert reads_plainly(text) is plain
