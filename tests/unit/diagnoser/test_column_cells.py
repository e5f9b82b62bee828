"""A column's readings made once (`ColumnCells`): each equals the reading made directly, on cells of every shape a
source file holds, and the quality evidence parses a read column's numbers at most once per window."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import services.diagnoser.experiments.column_cells as column_cells
from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.experiments.column_cells import ColumnCells, is_null
from services.diagnoser.extractors.source_quality import source_quality_evidence
from services.diagnoser.profiling.numbers import plain_numbers
from tests.unit.diagnoser.test_extractor_source_data import READ, frame, pairs

COLUMNS = {
    "integers": pd.Series(["1", "2", " 3 ", "-4", "5"]),
    "floats and null tokens": pd.Series(["1.5", "NA", "", "null", "2e3", "N/A", " nan ", "7"]),
    "formatted": pd.Series(["$1,234.50", "12%", "1 000", "3.0", "(5)"]),
    "non-finite": pd.Series(["inf", "-Infinity", "NaN", "1", "-nan"]),
    "objects": pd.Series([None, np.nan, 3, 2.5, "x", True, "  "], dtype=object),
    "text": pd.Series(["gold", "silver", "Gold ", "none", "#N/A"]),
    "all null": pd.Series(["", "NA", None], dtype=object),
    "empty": pd.Series([], dtype=object),
    "sparse index": pd.Series(["1", "x", "", "2"], index=[10, 3, 99, 7]),
    "padded as read": pd.Series([" -999", "-999 ", "-999", None, "\t7\n", "\u00a07", "7"], dtype="str"),
    "nullable string": pd.Series([" a", "a", None, "b ", "B"], dtype="string"),
    "named": pd.Series(["x ", None, "x"], dtype="str", name="plan"),
}


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_each_reading_is_the_direct_one(name: str) -> None:
    cells = COLUMNS[name]
    column = ColumnCells(cells)
    present = ~is_null(cells)
    direct_share = float(plain_numbers(cells[present]).notna().mean()) if present.any() else 0.0
    assert column.numeric_share == direct_share
    pd.testing.assert_series_equal(column.null, is_null(cells))
    pd.testing.assert_series_equal(column.plain, plain_numbers(cells))
    pd.testing.assert_series_equal(column.stripped, cells.astype(str).str.strip())
    assert len(column) == len(cells)


def test_quality_evidence_parses_each_read_column_once_per_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    thresholds = central_diagnosis_policy()
    incident = frame(2)
    incident.loc[:120, "spend"] = -999.0  # a sentinel: the numeric checks all run
    found = pairs(tmp_path, incident, thresholds)
    parsed: list[str] = []

    def counted(cells: pd.Series, **factorized: object) -> pd.Series:
        parsed.append(str(cells.name))
        return plain_numbers(cells, **factorized)  # type: ignore[arg-type]

    monkeypatch.setattr(column_cells, "plain_numbers", counted)
    evidence = source_quality_evidence(found, READ, thresholds)

    assert "spend" in evidence.values["faulty_columns"]
    assert evidence.values["columns"]["spend"]["sentinels"] == ["-999.0"]
    # each column's approval cells once (is it numeric?), the incident's once for the numeric columns: never twice
    assert sorted(parsed) == ["spend", "spend", "tenure", "tenure", "tier"]


def every_cell_null(cells: pd.Series) -> pd.Series:
    """The null rule read on every cell: empty, or one of the tokens once stripped and lower-cased."""
    return cells.fillna("").astype(str).str.strip().str.lower().isin(column_cells.NULL_TOKENS)


RANDOM_TOKENS = ["", " ", "NA", " n/a", "Null", "NONE ", "nan", "-nan", "NaT", "<NA>", "#N/A", "0", "1.5", "x", "na na"]


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_nulls_read_per_distinct_cell_are_the_per_cell_ones(name: str) -> None:
    cells = COLUMNS[name]
    pd.testing.assert_series_equal(is_null(cells), every_cell_null(cells), check_names=False)


@pytest.mark.parametrize("seed", range(5))
def test_nulls_of_a_read_file_are_the_per_cell_ones(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = 3000
    values = {
        "tokens": rng.choice(RANDOM_TOKENS, rows),
        "distinct": rng.random(rows).round(6).astype(str),
        "mixed": np.where(
            rng.random(rows) < 0.2, rng.choice(RANDOM_TOKENS, rows), rng.integers(0, 50, rows).astype(str)
        ),
    }
    path = tmp_path / "window.csv"
    pd.DataFrame(values).to_csv(path, index=False)
    read = pd.read_csv(path, dtype=str, keep_default_na=True)  # as the diagnoser reads a window
    for name in values:
        pd.testing.assert_series_equal(is_null(read[name]), every_cell_null(read[name]))


def test_text_cells_are_told_apart_once_for_every_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """A column read as text is factorised once for its nulls, numbers and stripped text together; each reading
    then works on its distinct cells (three here), not on its 3,000 cells."""
    cells = pd.Series(np.resize(np.array([" 1", "NA", "2 "], dtype=object), 3000), dtype="str")
    calls: list[int] = []
    real = pd.factorize

    def counted(values: object, *args: object, **kwargs: object) -> object:
        calls.append(len(values))  # type: ignore[arg-type]
        return real(values, *args, **kwargs)

    monkeypatch.setattr(column_cells.pd, "factorize", counted)
    column = ColumnCells(cells)
    assert column.numeric_share == 1.0
    assert column.stripped.value_counts().to_dict() == {"1": 1000, "NA": 1000, "2": 1000}
    assert calls == [3000]
