"""A features command's matrix read as floats by the CSV parser when it can, else cell by cell: the same frame either
way, bit for bit (values, missing cells, the sign of zero, columns, index), for numbers written in many ways, for odd
cells, and for odd files."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import services.diagnoser.feature_runs as feature_runs
from services.diagnoser.feature_runs import numeric_matrix, read_matrix

ODD_CELLS = [
    "", " ", " 1.5", "1.5 ", " 1.5 ", "\t1.5", "inf", "-inf", "+inf", "Infinity", "-Infinity", "INF", "infinity", "nan",
    "NaN", "-nan", "NA", "n/a", "#N/A", "null", "None", "1e400", "-1e400", "1e-400", "-0", "-0.0", "+1", "0x1A",
    "1_000", "1,000", "TRUE", "true", "1.5e", ".5", "5.", "00012", "1d5", "1.5f", "1.5.5", "--1", "1E5", "\uff11",
    "\u0661", "'1'", "1 2", "abc", "1e5", "4.9e-324", "1.7976931348623157e308", "2.2250738585072014e-308",
]  # fmt: skip


def _cell_by_cell(path: Path) -> pd.DataFrame:
    return numeric_matrix(pd.read_csv(path, dtype=str, keep_default_na=False))


def _same(read: pd.DataFrame, expected: pd.DataFrame) -> None:
    assert list(read.columns) == list(expected.columns)
    assert read.index.equals(expected.index)
    assert read.dtypes.tolist() == expected.dtypes.tolist()
    left, right = read.to_numpy(), expected.to_numpy()
    assert left.shape == right.shape
    assert np.array_equal(np.isnan(left), np.isnan(right))
    assert np.array_equal(left[~np.isnan(left)].view(np.int64), right[~np.isnan(right)].view(np.int64))


def _quoted(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"'


def test_numbers_written_in_many_ways_read_the_same_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(18)
    formats = ["%r", "%.17g", "%.6g", "%.3f", "%.12e", "%.1f", "%d"]
    rows = []
    for _ in range(3000):
        row = []
        for _ in range(4):
            value = rng.gauss(0, 1) * 10.0 ** rng.randint(-12, 12)
            chosen = rng.choice(formats)
            cell = chosen % (int(value) if chosen == "%d" else value)
            row.append(cell if float(cell) != 0 else "0")  # a negative zero is read cell by cell: not this test's
        rows.append(",".join(row))
    path = tmp_path / "features.csv"
    path.write_text("a,b,c,d\n" + "\n".join(rows) + "\n")
    expected = _cell_by_cell(path)

    def not_cell_by_cell(raw: pd.DataFrame) -> pd.DataFrame:
        raise AssertionError("every cell is a float: the parser's numbers should have been taken")

    monkeypatch.setattr(feature_runs, "numeric_matrix", not_cell_by_cell)
    _same(read_matrix(path), expected)


@pytest.mark.parametrize("cell", ODD_CELLS)
def test_an_odd_cell_reads_as_the_cell_by_cell_reading_reads_it(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "features.csv"
    path.write_text(f"x,y\n1.0,2\n{_quoted(cell)},3\n-0.0,{_quoted(cell)}\n")
    _same(read_matrix(path), _cell_by_cell(path))


@pytest.mark.parametrize(
    "text",
    ["x,y\n", "x\n\n", "x,y\n1,2\n3\n", "x,x\n1,2\n", "x,y\n1,2,3\n4,5,6\n", "x,y\nabc,1\n", "x,y\n1e5,2\n"],
    ids=["header only", "blank line", "short row", "same name twice", "long rows", "text", "exponent"],
)
def test_an_odd_file_reads_as_the_cell_by_cell_reading_reads_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "features.csv"
    path.write_text(text)
    _same(read_matrix(path), _cell_by_cell(path))


def test_a_file_that_is_no_table_raises_what_the_cell_by_cell_reading_raises(tmp_path: Path) -> None:
    path = tmp_path / "features.csv"
    path.write_text("\n")
    with pytest.raises(ValueError) as cell_by_cell:
        _cell_by_cell(path)
    with pytest.raises(type(cell_by_cell.value)):
        read_matrix(path)
