"""numeric_coercion on code shapes people write: the text column's values reach a conversion through a helper
of the same package (vectorised or per value, in the same module or a sibling), a per-record loop, a numpy
comprehension, or a column name held in a constant, a class attribute or a function default. The conversion
site itself parses formatted numbers; each test runs the patched code on formatted cells."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from contracts.events.diagnosis import RepairHints
from services.repairer.strategies import numeric_coercion
from services.repairer.strategies.number_text_helper import HELPER_LINES, TEXT_HELPER_LINES
from tests.unit.repairer.strategies.patched_trees import (
    assert_guard_accepts,
    diff_lines,
    edit_of,
    git_applied,
    load_module,
    refusal_of,
    repair_context,
)

SPEND = RepairHints(text_numeric_columns=["monthly_spend"])
FORMATTED = ["$1,234.50", "1.234,5", "USD 845.00", " 12 ", "\u20ac7,25", "CHF 1'234.50"]
PARSED = [1234.5, 1234.5, 845.0, 12.0, 7.25, 1234.5]


def context_for(tmp_path: Path, files: dict[str, str], hints: RepairHints = SPEND, **kwargs):  # type: ignore[no-untyped-def]
    return repair_context(tmp_path, files, hypothesis="type_conversion", hints=hints, **kwargs)


def same_numbers(values: object, expected: list[float]) -> bool:
    return bool(np.allclose(np.asarray(values, dtype=float), expected, equal_nan=True))


CLEANING = "pkg/cleaning.py"
CLEANING_SOURCE = '''"""Cleaning helpers shared by the feature code."""

import pandas as pd


def to_amount(series: pd.Series) -> pd.Series:
    """Amounts as floats; cells that do not parse are NaN."""
    return pd.to_numeric(series, errors="coerce")


def to_count(series: pd.Series) -> pd.Series:
    return pd.to_numeric(series, errors="coerce").fillna(0).astype(int)
'''
FEATURES = "pkg/features.py"
FEATURES_SOURCE = """import pandas as pd

from .cleaning import to_amount


def spend_features(frame: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=frame.index)
    out["spend"] = to_amount(frame["monthly_spend"])
    out["tickets"] = frame["support_tickets"]
    return out
"""


def test_a_vectorised_helper_in_a_sibling_module_parses_where_it_converts(tmp_path: Path) -> None:
    files = {CLEANING: CLEANING_SOURCE, FEATURES: FEATURES_SOURCE, "pkg/__init__.py": ""}
    context = context_for(tmp_path, files)
    edit = edit_of(numeric_coercion.propose(context))
    assert edit.files == (CLEANING,)
    assert diff_lines(edit.unified_diff) == [
        *(f"+{line}" for line in HELPER_LINES),
        "+",
        "+",
        '-    return pd.to_numeric(series, errors="coerce")',
        '+    return pd.to_numeric(series.map(_parse_number_text), errors="coerce")',
    ]
    assert_guard_accepts(context, edit)
    root = git_applied(tmp_path, files, edit.unified_diff)
    cleaning = load_module(root / CLEANING)
    assert same_numbers(cleaning.to_amount(pd.Series(FORMATTED)), PARSED)
    assert cleaning.to_count(pd.Series(["3", "x"])).tolist() == [3, 0]  # the other helper is left alone


PER_VALUE_SOURCE = '''import numpy as np
import pandas as pd

SPEND = "monthly_spend"


def _to_float(text, default=-1.0):
    """A cell as a float, or the default."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return default


class SpendEncoder:
    def __init__(self, column: str = SPEND):
        self.column = column

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        return frame[self.column].apply(_to_float).to_numpy()
'''


def test_a_per_value_helper_applied_to_the_column_keeps_its_own_fallback(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: PER_VALUE_SOURCE})
    edit = edit_of(numeric_coercion.propose(context))
    assert diff_lines(edit.unified_diff) == [
        *(f"+{line}" for line in TEXT_HELPER_LINES),
        "+",
        "+",
        "-        return float(text)",
        "+        return float(_number_text(text))",
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: PER_VALUE_SOURCE}, edit.unified_diff) / FEATURES)
    cells = [*FORMATTED, "n/a", "", None]
    out = module.SpendEncoder().transform(pd.DataFrame({"monthly_spend": cells}, dtype=object))
    # formatted numbers parse; what did not read as a number still takes the module's own default
    assert out.tolist() == [*PARSED, -1.0, -1.0, -1.0]


RECORDS_SOURCE = """import csv


class ExtractReader:
    amount_field = "total_spend"

    def __init__(self, path):
        self.path = path

    def amounts(self) -> list[float]:
        values = []
        with open(self.path, newline="", encoding="utf-8") as handle:
            for record in csv.DictReader(handle):
                values.append(parse_money(record[self.amount_field]))
        return values


def parse_money(cell: str) -> float:
    cell = cell.strip()
    if not cell:
        return 0.0
    return float(cell)
"""


def test_a_per_record_loop_through_a_helper_defined_after_its_caller(tmp_path: Path) -> None:
    hints = RepairHints(text_numeric_columns=["total_spend"])
    context = context_for(tmp_path, {FEATURES: RECORDS_SOURCE}, hints)
    edit = edit_of(numeric_coercion.propose(context))
    assert diff_lines(edit.unified_diff)[-2:] == [
        "-    return float(cell)",
        "+    return float(_parse_number_text(cell))",
    ]
    assert edit.edits[0].new_text.index("def _parse_number_text") < edit.edits[0].new_text.index("class ExtractReader")
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: RECORDS_SOURCE}, edit.unified_diff) / FEATURES)
    extract = tmp_path / "extract.csv"
    pd.DataFrame({"customer": list("abcdefg"), "total_spend": [*FORMATTED, ""]}).to_csv(extract, index=False)
    assert same_numbers(module.ExtractReader(extract).amounts(), [*PARSED, 0.0])


NUMPY_SOURCE = """import numpy as np


def design(columns: dict[str, np.ndarray]) -> np.ndarray:
    amount = np.array([float(value) for value in columns["amount"]])
    return np.column_stack([np.log1p(amount), columns["visits"]])
"""


def test_a_numpy_comprehension_over_the_column_converts_each_value(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: NUMPY_SOURCE}, RepairHints(text_numeric_columns=["amount"]))
    edit = edit_of(numeric_coercion.propose(context))
    assert diff_lines(edit.unified_diff)[-1] == (
        '+    amount = np.array([float(_parse_number_text(value)) for value in columns["amount"]])'
    )
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: NUMPY_SOURCE}, edit.unified_diff) / FEATURES)
    matrix = module.design({"amount": np.array(["$1,000", "2.5"]), "visits": np.array([1.0, 2.0])})
    assert same_numbers(matrix[:, 0], [math.log1p(1000.0), math.log1p(2.5)])


DEFAULT_SOURCE = """import pandas as pd


def numeric(frame, column="monthly_spend"):
    return frame[column].astype(float)


def features(frame):
    return pd.DataFrame({"spend": numeric(frame), "fee": numeric(frame, "fee")})
"""


def test_a_function_default_names_the_column(tmp_path: Path) -> None:
    context = context_for(tmp_path, {FEATURES: DEFAULT_SOURCE})
    edit = edit_of(numeric_coercion.propose(context))
    assert diff_lines(edit.unified_diff)[-2:] == [
        "-    return frame[column].astype(float)",
        "+    return frame[column].map(_parse_number_text).astype(float)",
    ]
    assert_guard_accepts(context, edit)
    module = load_module(git_applied(tmp_path, {FEATURES: DEFAULT_SOURCE}, edit.unified_diff) / FEATURES)
    out = module.features(pd.DataFrame({"monthly_spend": FORMATTED, "fee": ["1", "2", "3", "4", "5", "6"]}))
    assert same_numbers(out["spend"], PARSED) and out["fee"].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_the_helpers_read_currency_codes_and_leave_other_text_to_the_caller(tmp_path: Path) -> None:
    namespace: dict[str, object] = {}
    exec("\n".join([*HELPER_LINES, *TEXT_HELPER_LINES]), namespace)  # the helpers exactly as a patch adds them
    parse, text = namespace["_parse_number_text"], namespace["_number_text"]
    parsed = [parse(value) for value in [*FORMATTED, "845.00 EUR", "", "n/a"]]  # type: ignore[operator]
    assert same_numbers(parsed, [*PARSED, 845.0, math.nan, math.nan])
    assert [text(value) for value in ["$1,234.50", "USD 845.00", "1.234,5", "n/a", "", 3.5, None]] == [  # type: ignore[operator]
        "1234.50",
        "845.00",
        "1234.5",
        "n/a",
        "",
        3.5,
        None,
    ]


def test_refuses_when_the_conversion_is_in_a_module_a_repair_may_not_edit(tmp_path: Path) -> None:
    files = {"vendor/cleaning.py": CLEANING_SOURCE, FEATURES: FEATURES_SOURCE.replace(".cleaning", "vendor.cleaning")}
    reason = refusal_of(numeric_coercion.propose(context_for(tmp_path, files)))
    assert reason == (
        "no permitted file converts monthly_spend to a number at a site it can parse safely "
        "(its conversion is in vendor/cleaning.py, which a repair may not edit)"
    )


def test_refuses_a_helper_that_converts_with_something_else(tmp_path: Path) -> None:
    source = (
        "from decimal import Decimal\n\n\ndef money(cell):\n    return Decimal(cell)\n\n\n"
        'def features(frame):\n    return frame["monthly_spend"].map(money)\n'
    )
    reason = refusal_of(numeric_coercion.propose(context_for(tmp_path, {FEATURES: source})))
    assert reason == "no permitted file converts monthly_spend to a number at a site it can parse safely"
