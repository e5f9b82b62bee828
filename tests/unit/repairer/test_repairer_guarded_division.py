"""guarded_division: two inserted lines that stop a division by a parameter from dividing by zero."""

from __future__ import annotations

import math

import pytest

from services.repairer.strategies.guarded_division import guard_division
from services.repairer.strategies.outcome import SourceEdit, StrategyRefusal
from services.repairer.unified_diff import parse_unified_diff

FILE = "pkg/features.py"
SOURCE = '''"""Features."""

from __future__ import annotations


def calculate_monthly_spend(
    total_spend: float,
    account_age_months: int,
) -> float:
    """Average spend per month of account life."""
    return total_spend / account_age_months


def untouched(value: float) -> float:
    return value * 2
'''


def load(source: str) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(compile(source, FILE, "exec"), namespace)
    return namespace


def edit_of(source: str, function: str = "calculate_monthly_spend") -> SourceEdit:
    edit = guard_division(source, FILE, function)
    assert isinstance(edit, SourceEdit), edit
    return edit


def test_repaired_function_no_longer_divides_by_zero() -> None:
    with pytest.raises(ZeroDivisionError):
        load(SOURCE)["calculate_monthly_spend"](120.0, 0)  # type: ignore[operator]
    repaired = load(edit_of(SOURCE).new_content)["calculate_monthly_spend"]
    assert repaired(120.0, 0) == 0.0  # type: ignore[operator]
    assert repaired(120.0, -3) == 0.0  # type: ignore[operator]
    assert math.isclose(repaired(120.0, 12), 10.0)  # type: ignore[operator]


def test_diff_adds_exactly_the_two_guard_lines_after_the_docstring() -> None:
    edit = edit_of(SOURCE)
    [patch] = parse_unified_diff(edit.unified_diff)
    assert (patch.old_path, patch.new_path) == (FILE, FILE)
    assert patch.added == ("    if account_age_months <= 0:", "        return 0.0")
    assert patch.removed == ()
    assert edit.unified_diff.startswith(f"--- a/{FILE}\n+++ b/{FILE}\n")
    assert edit.inserted_after_line == 10


def test_every_other_byte_is_unchanged() -> None:
    edit = edit_of(SOURCE)
    lines = edit.new_content.splitlines(keepends=True)
    inserted = lines[edit.inserted_after_line : edit.inserted_after_line + 2]
    assert "".join(inserted) == "    if account_age_months <= 0:\n        return 0.0\n"
    assert "".join(lines[: edit.inserted_after_line] + lines[edit.inserted_after_line + 2 :]) == SOURCE


def test_refuses_when_there_is_no_division() -> None:
    refusal = guard_division(SOURCE, FILE, "untouched")
    assert isinstance(refusal, StrategyRefusal)
    assert "no unguarded division" in refusal.reason


def test_refuses_when_the_division_is_already_guarded() -> None:
    assert isinstance(guard_division(edit_of(SOURCE).new_content, FILE, "calculate_monthly_spend"), StrategyRefusal)


def test_refuses_unknown_functions_and_unparsable_files() -> None:
    assert "no function" in guard_division(SOURCE, FILE, "missing").reason  # type: ignore[union-attr]
    assert "does not parse" in guard_division("def broken(:\n", FILE, "broken").reason  # type: ignore[union-attr]


def test_refuses_a_division_by_something_other_than_a_parameter() -> None:
    source = "def rate(total: float) -> float:\n    months = 12\n    return total / months\n"
    assert isinstance(guard_division(source, FILE, "rate"), StrategyRefusal)


def test_refuses_when_no_type_consistent_default_exists() -> None:
    source = "def rate(total, months) -> str:\n    return str(total / months)\n"
    refusal = guard_division(source, FILE, "rate")
    assert isinstance(refusal, StrategyRefusal) and "default" in refusal.reason


def test_int_return_type_gets_an_int_default() -> None:
    source = "def per_box(items: int, box: int) -> int:\n    return items // box\n"
    edit = edit_of(source, "per_box")
    assert edit.inserted_lines == ("    if box <= 0:", "        return 0")
    assert load(edit.new_content)["per_box"](10, 0) == 0  # type: ignore[operator]


def test_methods_tabs_and_crlf_line_endings_are_kept() -> None:
    source = (
        "class Rates:\r\n\tdef per_month(self, total: float, months: int) -> float:\r\n\t\treturn total / months\r\n"
    )
    edit = edit_of(source, "Rates.per_month")
    assert edit.new_content == (
        "class Rates:\r\n\tdef per_month(self, total: float, months: int) -> float:\r\n"
        "\t\tif months <= 0:\r\n\t\t\treturn 0.0\r\n\t\treturn total / months\r\n"
    )


def test_guards_the_divisor_named_by_the_diagnosis() -> None:
    source = "def ratio(a: float, b: float, c: float) -> float:\n    return a / b + a / c\n"
    ambiguous = guard_division(source, FILE, "ratio")
    assert isinstance(ambiguous, StrategyRefusal) and "several parameters" in ambiguous.reason
    edit = guard_division(source, FILE, "ratio", divisor="c")
    assert isinstance(edit, SourceEdit)
    assert edit.inserted_lines == ("    if c <= 0:", "        return 0.0")
