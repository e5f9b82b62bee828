"""Reading cells as numbers: the vectorised first pass gives exactly what the per-cell string path gives, on cells
written the ways data arrives (plain, padded, formatted, scientific, signed, text, blanks, inf and nan words)."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from services.diagnoser.profiling.column_profile import QUANTILES, profile_column
from services.diagnoser.profiling.numbers import FORMATTING, cell_numbers, formatted_numbers, plain_numbers

WRITTEN = [
    "12", "-3.5", "+4", " 7 ", "\t8.25", "1e3", "2.5E-2", "-1e+2", ".5", "5.", "0", "-0", "00042",
    "$1,234.50", "1,234", "12%", "3 kg", "€9", "(12)", "1_000", "0x1F", "1.2.3", "--5", "e", ".", "-", "",
    "   ", "abc", "N/A", "inf", "-inf", "Infinity", "nan", "NaN", "1e999", "١٢", "12\u00a0", "9" * 30, "true",
]  # fmt: skip


def reference_plain(cells: pd.Series) -> pd.Series:
    return pd.to_numeric(cells.astype("string").str.strip(), errors="coerce").astype("float64")


def reference_formatted(cells: pd.Series) -> pd.Series:
    stripped = cells.astype("string").str.replace(FORMATTING, "", regex=True)
    return pd.to_numeric(stripped, errors="coerce").astype("float64")


@pytest.mark.parametrize("dtype", ["str", object])  # "str": what read_csv(dtype=str) gives with pandas 3
@pytest.mark.parametrize("seed", range(5))
def test_both_readings_match_the_per_cell_string_path(seed: int, dtype: object) -> None:
    rng = random.Random(seed)
    values: list[str | None] = [rng.choice([*WRITTEN, None]) for _ in range(400)]
    values += [f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 6)}f}" for _ in range(200)]
    cells = pd.Series(values, dtype=dtype)
    for fast, reference in ((plain_numbers, reference_plain), (formatted_numbers, reference_formatted)):
        got, expected = fast(cells), reference(cells)
        assert got.dtype == np.float64 and got.index.equals(cells.index)
        mismatched = [
            (values[i], got.iloc[i], expected.iloc[i])
            for i in range(len(values))
            if not (got.iloc[i] == expected.iloc[i] or (np.isnan(got.iloc[i]) and np.isnan(expected.iloc[i])))
        ]
        assert mismatched == [], (fast.__name__, mismatched[:10])


def test_a_column_read_from_csv_as_text_keeps_its_index_and_blanks() -> None:
    cells = pd.Series(["1", None, "x", "$2"], index=[10, 11, 12, 13], dtype=object)
    assert plain_numbers(cells).tolist()[0] == 1.0 and np.isnan(plain_numbers(cells).tolist()[3])
    assert formatted_numbers(cells).tolist()[3] == 2.0
    assert list(formatted_numbers(cells).index) == [10, 11, 12, 13]


@pytest.mark.parametrize("values", [[], [None, None], ["a", "a", "b"]])
def test_an_empty_all_null_or_all_text_column_reads_as_no_numbers(values: list[str | None]) -> None:
    cells = pd.Series(values, dtype=object)
    for read in (plain_numbers, formatted_numbers):
        got = read(cells)
        assert len(got) == len(values) and got.dtype == np.float64 and got.isna().all()


@pytest.mark.parametrize("dtype", ["str", object])
@pytest.mark.parametrize("seed", range(5))
def test_both_readings_at_once_equal_each_reading_alone(seed: int, dtype: object) -> None:
    """A profile reads a column both ways with the cells told apart once: the same figures, and its distinct count
    is pandas' own of the present cells."""
    rng = random.Random(seed)
    values: list[str | None] = [rng.choice([*WRITTEN, None]) for _ in range(300)]
    values += [f"{rng.uniform(-1e4, 1e4):.{rng.randint(0, 3)}f}" for _ in range(100)]
    cells = pd.Series(values, index=range(1000, 1000 + len(values)), dtype=dtype)
    both = cell_numbers(cells)
    pd.testing.assert_series_equal(both.plain, plain_numbers(cells))
    pd.testing.assert_series_equal(both.formatted, formatted_numbers(cells))
    assert both.distinct == cells[cells.notna()].nunique()


@pytest.mark.parametrize("values", [[], [None, None], ["a", "a", "b"], ["1", "1", None, "$1"]])
def test_both_readings_at_once_on_small_columns(values: list[str | None]) -> None:
    cells = pd.Series(values, dtype=object)
    both = cell_numbers(cells)
    pd.testing.assert_series_equal(both.plain, plain_numbers(cells))
    pd.testing.assert_series_equal(both.formatted, formatted_numbers(cells))
    assert both.distinct == cells[cells.notna()].nunique()


@pytest.mark.parametrize("seed", range(3))
def test_a_profile_gives_the_figures_of_one_pandas_call_per_quantile_and_per_rate(seed: int) -> None:
    rng = random.Random(seed)
    finite = [w for w in WRITTEN if np.isfinite(pd.to_numeric(pd.Series([w]), errors="coerce").fillna(0)).all()]
    values: list[str | None] = [rng.choice([*finite, None]) for _ in range(100)]
    values += [f"{rng.uniform(-50, 50):.{rng.randint(0, 4)}f}" for _ in range(400)]
    cells = pd.Series(values, index=range(7, 7 + len(values)), dtype=object)
    profile = profile_column("x", cells, numeric_parse_rate=0.5, max_categories=20)
    present = cells.notna()
    plain = plain_numbers(cells)
    assert profile.numeric_parse_rate == round(float(plain[present].notna().sum()) / int(present.sum()), 6)
    assert profile.type_class == "numeric"
    numbers = plain.dropna()
    one_by_one = {f"q{int(q * 100):02d}": round(float(numbers.quantile(q)), 6) for q in QUANTILES}
    assert profile.quantiles.keys() == one_by_one.keys()
    assert all(
        got == want or (np.isnan(got) and np.isnan(want))
        for got, want in zip(profile.quantiles.values(), one_by_one.values(), strict=True)
    )
