"""numeric_coercion: one helper and a one-line change at each conversion of the text column."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from contracts.events.diagnosis import RepairHints
from services.repairer.strategies import numeric_coercion
from services.repairer.strategies.number_text_helper import HELPER_LINES
from tests.unit.repairer.strategies.patched_trees import (
    diff_lines,
    edit_of,
    git_applied,
    load_module,
    refusal_of,
    repair_context,
)

FEATURES = "pkg/features.py"
DATA = "pkg/data.py"
PANDAS_SOURCE = '''"""Features."""

from __future__ import annotations

import pandas as pd

RATE = 12


def spend_features(frame: pd.DataFrame) -> pd.DataFrame:
    """Spend as numbers."""
    out = pd.DataFrame(index=frame.index)
    out["spend"] = pd.to_numeric(frame["monthly_spend"], errors="coerce")
    out["yearly"] = frame["monthly_spend"].astype(float) * RATE
    return out
'''
CSV_SOURCE = '''"""Read the customer extract into typed numpy columns."""

import csv
from pathlib import Path

import numpy as np

INTEGER_COLUMNS = ("account_age_months", "support_tickets")
FLOAT_COLUMNS = ("total_spend",)


def load_customers(path: Path) -> dict[str, np.ndarray]:
    with Path(path).open(newline="", encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))
    columns: dict[str, np.ndarray] = {}
    for name in INTEGER_COLUMNS:
        columns[name] = np.array([int(record[name]) for record in records], dtype=np.int64)
    for name in FLOAT_COLUMNS:
        columns[name] = np.array([float(record[name]) for record in records], dtype=np.float64)
    return columns
'''
HINTS = RepairHints(text_numeric_columns=["monthly_spend"])
FORMATTED = ["$1,234.50", "1.234,5", "", " 12 ", "\u20ac7,25"]
PARSED = [1234.5, 1234.5, math.nan, 12.0, 7.25]


def same_numbers(values: object, expected: list[float]) -> bool:
    return bool(np.allclose(np.asarray(values, dtype=float), expected, equal_nan=True))


def test_pandas_reads_get_the_helper_and_a_one_line_change_each(tmp_path: Path) -> None:
    context = repair_context(tmp_path, {FEATURES: PANDAS_SOURCE}, hypothesis="type_conversion", hints=HINTS)
    edit = edit_of(numeric_coercion.propose(context))
    assert diff_lines(edit.unified_diff) == [
        *(f"+{line}" for line in HELPER_LINES),
        "+",
        "+",
        '-    out["spend"] = pd.to_numeric(frame["monthly_spend"], errors="coerce")',
        '-    out["yearly"] = frame["monthly_spend"].astype(float) * RATE',
        '+    out["spend"] = pd.to_numeric(frame["monthly_spend"].map(_parse_number_text), errors="coerce")',
        '+    out["yearly"] = frame["monthly_spend"].map(_parse_number_text).astype(float) * RATE',
    ]
    module = load_module(git_applied(tmp_path, {FEATURES: PANDAS_SOURCE}, edit.unified_diff) / FEATURES)
    out = module.spend_features(pd.DataFrame({"monthly_spend": FORMATTED}))
    assert same_numbers(out["spend"], PARSED)
    assert same_numbers(out["yearly"], [value * 12 for value in PARSED])


def test_a_loop_over_a_column_list_converting_record_fields(tmp_path: Path) -> None:
    hints = RepairHints(text_numeric_columns=["total_spend"])
    context = repair_context(tmp_path, {DATA: CSV_SOURCE}, hypothesis="type_conversion", hints=hints)
    edit = edit_of(numeric_coercion.propose(context))
    assert diff_lines(edit.unified_diff)[-2:] == [
        "-        columns[name] = np.array([float(record[name]) for record in records], dtype=np.float64)",
        "+        columns[name] = np.array([float(_parse_number_text(record[name])) for record in records], "
        "dtype=np.float64)",
    ]
    module = load_module(git_applied(tmp_path, {DATA: CSV_SOURCE}, edit.unified_diff) / DATA)
    extract = tmp_path / "customers.csv"
    pd.DataFrame({"account_age_months": [1] * 5, "support_tickets": [0] * 5, "total_spend": FORMATTED}).to_csv(
        extract, index=False
    )
    assert same_numbers(module.load_customers(extract)["total_spend"], PARSED)


def test_numpy_array_conversions(tmp_path: Path) -> None:
    source = (
        "import numpy as np\n\n\ndef spend(frame):\n"
        '    return np.asarray(frame["monthly_spend"], dtype=float) + frame["fee"].astype(float)\n'
    )
    hints = RepairHints(text_numeric_columns=["monthly_spend", "fee"])
    context = repair_context(tmp_path, {FEATURES: source}, hypothesis="type_conversion", hints=hints)
    edit = edit_of(numeric_coercion.propose(context))
    assert diff_lines(edit.unified_diff)[-1] == (
        '+    return np.asarray([_parse_number_text(value) for value in frame["monthly_spend"]], dtype=float) + '
        'np.array([_parse_number_text(value) for value in frame["fee"]]).astype(float)'
    )
    module = load_module(git_applied(tmp_path, {FEATURES: source}, edit.unified_diff) / FEATURES)
    frame = {"monthly_spend": np.array(["1,000", "2.5"]), "fee": np.array(["$1", "0"])}
    assert module.spend(frame).tolist() == [1001.0, 2.5]


def test_the_helper_is_not_added_twice(tmp_path: Path) -> None:
    context = repair_context(tmp_path, {FEATURES: PANDAS_SOURCE}, hypothesis="type_conversion", hints=HINTS)
    once = edit_of(numeric_coercion.propose(context)).edits[0].new_text
    source = once.replace('frame["monthly_spend"].map(_parse_number_text).astype', 'frame["monthly_spend"].astype')
    again = repair_context(tmp_path / "again", {FEATURES: source}, hypothesis="type_conversion", hints=HINTS)
    assert diff_lines(edit_of(numeric_coercion.propose(again)).unified_diff) == [
        '-    out["yearly"] = frame["monthly_spend"].astype(float) * RATE',
        '+    out["yearly"] = frame["monthly_spend"].map(_parse_number_text).astype(float) * RATE',
    ]


def test_refuses_without_a_conversion_of_the_column(tmp_path: Path) -> None:
    hints = RepairHints(text_numeric_columns=["region"])
    context = repair_context(tmp_path, {FEATURES: PANDAS_SOURCE}, hypothesis="type_conversion", hints=hints)
    assert "no permitted file converts region" in refusal_of(numeric_coercion.propose(context))


def test_refuses_a_module_without_a_definition_to_put_the_helper_before(tmp_path: Path) -> None:
    source = 'import pandas as pd\n\nframe = pd.read_csv("x.csv")\nspend = frame["monthly_spend"].astype(float)\n'
    context = repair_context(tmp_path, {FEATURES: source}, hypothesis="type_conversion", hints=HINTS)
    assert "no top-level definition" in refusal_of(numeric_coercion.propose(context))
