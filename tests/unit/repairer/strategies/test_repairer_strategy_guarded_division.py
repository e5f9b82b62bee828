"""guarded_division: two inserted lines that stop a division from dividing by zero (or a negative, null or
NaN denominator, as the policy says), returning the policy's, the base revision's or a typed fallback."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from contracts.events.diagnosis import Suspect
from libs.policy.repair import DivisionPolicy
from services.repairer.strategies import guarded_division
from services.repairer.strategies.guarded_division import guard_division
from tests.unit.repairer.strategies.patched_trees import (
    assert_guard_accepts,
    diff_lines,
    edit_of,
    git_applied,
    load_module,
    refusal_of,
    repair_context,
)

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
BASE = '''"""Features."""

from __future__ import annotations


def calculate_monthly_spend(total_spend: float, account_age_months: int) -> float:
    """Average spend per month of account life; brand-new accounts have no history yet."""
    if account_age_months <= 0:
        return -1.0
    monthly_spend = total_spend / account_age_months
    return monthly_spend


def untouched(value: float) -> float:
    return value * 2
'''
SUSPECT = Suspect(file=FILE, function="calculate_monthly_spend", divisor="account_age_months")


def new_text(source: str, function: str = "calculate_monthly_spend", **options: object) -> str:
    return edit_of(guard_division(source, FILE, function, **options)).edits[0].new_text  # type: ignore[arg-type]


def run(source: str, function: str, *args: object) -> object:
    namespace: dict[str, object] = {}
    exec(compile(source, FILE, "exec"), namespace)
    return namespace[function](*args)  # type: ignore[operator]


def test_the_patch_applies_with_git_and_the_repaired_function_returns_the_fallback(tmp_path: Path) -> None:
    context = repair_context(tmp_path, {FILE: SOURCE}, suspect=SUSPECT)
    edit = edit_of(guarded_division.propose(context))
    assert edit.files == (FILE,) and edit.function == "calculate_monthly_spend"
    assert edit.unified_diff.startswith(f"--- a/{FILE}\n+++ b/{FILE}\n")
    assert diff_lines(edit.unified_diff) == ["+    if account_age_months <= 0:", "+        return 0.0"]
    module = load_module(git_applied(tmp_path, {FILE: SOURCE}, edit.unified_diff) / FILE)
    assert module.calculate_monthly_spend(120.0, 0) == 0.0
    assert module.calculate_monthly_spend(120.0, -3) == 0.0
    assert math.isclose(module.calculate_monthly_spend(120.0, 12), 10.0)
    with pytest.raises(ZeroDivisionError):
        run(SOURCE, "calculate_monthly_spend", 120.0, 0)


def test_a_file_saved_with_a_byte_order_mark_is_repaired_and_keeps_its_mark(tmp_path: Path) -> None:
    """Python runs a file that starts with a UTF-8 byte order mark, so the repair reads it as Python (it used to
    refuse: the file "did not parse"), and the patch keeps the mark."""
    marked = "\ufeff" + SOURCE
    context = repair_context(tmp_path, {FILE: marked}, suspect=SUSPECT)
    edit = edit_of(guarded_division.propose(context))
    assert diff_lines(edit.unified_diff) == ["+    if account_age_months <= 0:", "+        return 0.0"]
    patched = git_applied(tmp_path, {FILE: marked}, edit.unified_diff) / FILE
    assert patched.read_bytes().startswith(b"\xef\xbb\xbf")
    assert load_module(patched).calculate_monthly_spend(120.0, 0) == 0.0


def test_a_file_with_windows_line_endings_gets_a_patch_that_applies_and_keeps_them(tmp_path: Path) -> None:
    """The candidate's text is read as it is on disk: read with newline translation, a CRLF file became LF text,
    and the patch made from it matched none of the file's lines (the guard refused it: "does not match")."""
    windows = SOURCE.replace("\n", "\r\n")
    context = repair_context(tmp_path, {FILE: windows}, suspect=SUSPECT)
    edit = edit_of(guarded_division.propose(context))
    assert "\n+    if account_age_months <= 0:\r\n+        return 0.0\r\n" in edit.unified_diff
    assert_guard_accepts(context, edit)
    patched = git_applied(tmp_path, {FILE: windows}, edit.unified_diff) / FILE
    assert b"\r\n    if account_age_months <= 0:\r\n        return 0.0\r\n" in patched.read_bytes()
    assert load_module(patched).calculate_monthly_spend(120.0, 0) == 0.0


def test_every_other_byte_is_unchanged() -> None:
    lines = new_text(SOURCE).splitlines(keepends=True)
    assert "".join(lines[10:12]) == "    if account_age_months <= 0:\n        return 0.0\n"
    assert "".join(lines[:10] + lines[12:]) == SOURCE


def test_the_fallback_is_the_base_revisions_when_the_policy_sets_none(tmp_path: Path) -> None:
    context = repair_context(tmp_path, {FILE: SOURCE}, base={FILE: BASE}, suspect=SUSPECT)
    edit = edit_of(guarded_division.propose(context))
    assert diff_lines(edit.unified_diff) == ["+    if account_age_months <= 0:", "+        return -1.0"]
    assert "from the base revision" in edit.rationale
    assert run(edit.edits[0].new_text, "calculate_monthly_spend", 5.0, 0) == -1.0


def test_the_policys_fallback_wins(tmp_path: Path) -> None:
    policy = DivisionPolicy(fallback=float("nan"))
    context = repair_context(tmp_path, {FILE: SOURCE}, base={FILE: BASE}, suspect=SUSPECT, division=policy)
    edit = edit_of(guarded_division.propose(context))
    assert diff_lines(edit.unified_diff)[1] == '+        return float("nan")'
    assert math.isnan(run(edit.edits[0].new_text, "calculate_monthly_spend", 5.0, 0))  # type: ignore[arg-type]


def test_a_policy_fallback_is_written_as_valid_python() -> None:
    text = new_text(SOURCE, policy=DivisionPolicy(fallback=0.5))
    assert "        return 0.5\n" in text and run(text, "calculate_monthly_spend", 1.0, 0) == 0.5


def test_null_and_nan_denominators_as_the_policy_says() -> None:
    policy = DivisionPolicy(denominators=frozenset({"zero", "negative", "null", "nan"}))
    text = new_text(SOURCE, policy=policy)
    assert (
        "    if account_age_months is None or account_age_months != account_age_months or account_age_months <= 0:\n"
        in text
    )
    for denominator in (None, float("nan"), 0, -2):
        assert run(text, "calculate_monthly_spend", 9.0, denominator) == 0.0
    assert run(text, "calculate_monthly_spend", 9.0, 3) == 3.0


def test_nan_uses_math_isnan_when_the_module_imports_math() -> None:
    source = "import math\n\n\ndef rate(total: float, n: float) -> float:\n    return total / n\n"
    text = new_text(source, "rate", policy=DivisionPolicy(denominators=frozenset({"zero", "nan"})))
    assert "    if math.isnan(n) or n == 0:\n" in text
    assert run(text, "rate", 1.0, float("nan")) == 0.0 and run(text, "rate", 1.0, -2.0) == -0.5


def test_assignment_form_floor_division_and_several_divisors_in_one_function() -> None:
    source = (
        "def per_box(items: int, box: int, crates: int) -> int:\n"
        "    boxes = items // box\n"
        "    per_crate = boxes // crates\n"
        "    return per_crate\n"
    )
    text = new_text(source, "per_box")
    assert text.splitlines()[1:3] == ["    if box <= 0 or crates <= 0:", "        return 0"]
    assert run(text, "per_box", 10, 0, 2) == 0 and run(text, "per_box", 10, 2, 0) == 0
    assert run(text, "per_box", 20, 2, 5) == 2


def test_a_local_divisor_is_guarded_right_before_the_statement_that_divides() -> None:
    source = (
        "def churn_rate(frame) -> float:\n"
        '    """Share of churned customers."""\n'
        '    customers = len(frame["customer_id"])\n'
        '    churned = sum(frame["churned"])\n'
        "    return churned / customers\n"
    )
    text = new_text(source, "churn_rate")
    assert text.splitlines()[4:6] == ["    if customers <= 0:", "        return 0.0"]
    frame = pd.DataFrame({"customer_id": [], "churned": []})
    assert run(text, "churn_rate", frame) == 0.0
    assert run(text, "churn_rate", pd.DataFrame({"customer_id": [1, 2], "churned": [1, 0]})) == 0.5


def test_methods_tabs_and_crlf_line_endings_are_kept() -> None:
    source = (
        "class Rates:\r\n\tdef per_month(self, total: float, months: int) -> float:\r\n\t\treturn total / months\r\n"
    )
    assert new_text(source, "Rates.per_month") == (
        "class Rates:\r\n\tdef per_month(self, total: float, months: int) -> float:\r\n"
        "\t\tif months <= 0:\r\n\t\t\treturn 0.0\r\n\t\treturn total / months\r\n"
    )


def test_the_divisor_named_by_the_diagnosis_is_the_only_one_guarded() -> None:
    source = "def ratio(a: float, b: float, c: float) -> float:\n    return a / b + a / c\n"
    assert new_text(source, "ratio", divisor="c").splitlines()[1] == "    if c <= 0:"
    assert new_text(source, "ratio").splitlines()[1] == "    if b <= 0 or c <= 0:"


@pytest.mark.parametrize(
    ("source", "function", "reason"),
    [
        (SOURCE, "untouched", "no unguarded division"),
        (SOURCE, "missing", "no function 'missing'"),
        ("def broken(:\n", "broken", "does not parse"),
        ("DAYS = 30\n\n\ndef rate(total: float) -> float:\n    return total / DAYS\n", "rate", "no unguarded"),
        ("def rate(total, months) -> str:\n    return str(total / months)\n", "rate", "fallback"),
        ("def rate(total, months):\n    return total // months\n", "rate", "fallback"),
        ('def rate(total, months):\n    """Only a docstring."""\n', "rate", "no unguarded"),
        ("def rate(total, months): return total / months\n", "rate", "starts on the def line"),
        (
            "def rate(rows, total):\n    for row in rows:\n        n = row['n']\n        total += total / n\n"
            "    return total\n",
            "rate",
            "inside a block",
        ),
    ],
)
def test_refusals(source: str, function: str, reason: str) -> None:
    assert reason in refusal_of(guard_division(source, FILE, function))


def test_refuses_a_division_that_is_already_guarded() -> None:
    assert "no unguarded division" in refusal_of(guard_division(new_text(SOURCE), FILE, "calculate_monthly_spend"))


def test_refuses_a_division_the_base_revision_made_unguarded_too(tmp_path: Path) -> None:
    context = repair_context(tmp_path, {FILE: SOURCE}, base={FILE: SOURCE}, suspect=SUSPECT)
    assert "not introduced" in refusal_of(guarded_division.propose(context))


def test_refuses_when_the_policy_guards_no_denominator() -> None:
    refusal = refusal_of(
        guard_division(SOURCE, FILE, "calculate_monthly_spend", policy=DivisionPolicy(denominators=frozenset()))
    )
    assert "guards no denominator" in refusal


def test_refuses_a_suspect_file_outside_the_candidate(tmp_path: Path) -> None:
    suspect = Suspect(file="../secret.py", function="f")
    context = repair_context(tmp_path, {FILE: SOURCE}, suspect=suspect)
    assert "not a readable file" in refusal_of(guarded_division.propose(context))
