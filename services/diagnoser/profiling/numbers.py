"""Reading text cells as numbers: plainly, and after stripping the formatting people put around numbers
(currency signs, thousands separators, units, percent signs).

Each distinct cell is read once (a text column holds few, a numeric one many), and the distinct cells pandas' own
parser reads at once skip the per-cell string operations: the same figures as reading every cell through them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

FORMATTING = r"[^0-9.eE+\-]"

Factorized = tuple[np.ndarray, pd.Index]
"""`pd.factorize` of a column: each cell's code (-1 for a missing cell) and the distinct present cells."""


@dataclass(frozen=True)
class CellNumbers:
    """A column's cells read both ways, and how many distinct present cells it has."""

    plain: pd.Series
    formatted: pd.Series
    distinct: int


def cell_numbers(cells: pd.Series) -> CellNumbers:
    """:func:`plain_numbers` and :func:`formatted_numbers` of ``cells`` and the count of its distinct non-null
    cells, with the cells told apart once and pandas' parse of them made once (what a column's profile needs)."""
    codes, distinct = pd.factorize(cells)  # a null cell's code is -1
    text = pd.Series(distinct, dtype=object)
    as_written = _parsed_as_written(text)
    return CellNumbers(
        plain=_spread(_plain(text, as_written.copy()), codes, cells.index),
        formatted=_spread(_formatted(text, as_written.copy()), codes, cells.index),
        distinct=len(distinct),
    )


def plain_numbers(cells: pd.Series, *, factorized: Factorized | None = None) -> pd.Series:
    """Each non-null cell as a float, NaN where it does not parse as a number as written (around whitespace).
    `factorized`: `pd.factorize(cells)`, when the caller made it already."""
    return _per_distinct_cell(cells, lambda text: _plain(text, _parsed_as_written(text)), factorized)


def formatted_numbers(cells: pd.Series) -> pd.Series:
    """Each non-null cell as a float once formatting characters are removed ("$1,234.50" -> 1234.5)."""
    return _per_distinct_cell(cells, lambda text: _formatted(text, _parsed_as_written(text)))


def parse_rate(parsed: pd.Series, present: pd.Series) -> float:
    """Share of the present (non-null) cells that parsed; 1.0 when no cell is present."""
    count = int(present.sum())
    if count == 0:
        return 1.0
    return int(np.count_nonzero(parsed.notna().to_numpy() & present.to_numpy())) / count


def _per_distinct_cell(
    cells: pd.Series,
    read: Callable[[pd.Series], np.ndarray],
    factorized: Factorized | None = None,
) -> pd.Series:
    codes, distinct = factorized if factorized is not None else pd.factorize(cells)  # a null cell's code is -1
    return _spread(read(pd.Series(distinct, dtype=object)), codes, cells.index)


def _spread(per_distinct: np.ndarray, codes: np.ndarray, index: pd.Index) -> pd.Series:
    """Each cell's value from its distinct cell's (NaN for a null cell, code -1)."""
    values = np.append(per_distinct, np.nan)
    return pd.Series(values[codes], index=index, dtype="float64")


def _plain(distinct: pd.Series, parsed: pd.Series) -> np.ndarray:
    """``parsed``: the distinct cells as pandas reads them as written (changed in place)."""
    rest = parsed.isna()
    if rest.any():  # what did not parse at once goes through the string path
        parsed[rest] = pd.to_numeric(distinct[rest].astype("string").str.strip(), errors="coerce").astype("float64")
    return parsed.to_numpy()


def _formatted(distinct: pd.Series, parsed: pd.Series) -> np.ndarray:
    """``parsed``: the distinct cells as pandas reads them as written (changed in place)."""
    parsed[~np.isfinite(parsed)] = np.nan  # "inf" reads as a number as written, as nothing once formatting goes
    rest = parsed.isna()
    if rest.any():
        stripped = distinct[rest].astype("string").str.replace(FORMATTING, "", regex=True)
        parsed[rest] = pd.to_numeric(stripped, errors="coerce").astype("float64")
    return parsed.to_numpy()


def _parsed_as_written(distinct: pd.Series) -> pd.Series:
    """The cells pandas' own parser reads as numbers, in one vectorised pass (the rest NaN)."""
    return pd.to_numeric(distinct, errors="coerce").astype("float64")
