"""Reading text cells as numbers: plainly, and after stripping the formatting people put around numbers
(currency signs, thousands separators, units, percent signs).

Each distinct cell is read once (a text column holds few, a numeric one many), and the distinct cells pandas' own
parser reads at once skip the per-cell string operations: the same figures as reading every cell through them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

FORMATTING = r"[^0-9.eE+\-]"


def plain_numbers(cells: pd.Series) -> pd.Series:
    """Each non-null cell as a float, NaN where it does not parse as a number as written (around whitespace)."""
    return _per_distinct_cell(cells, _plain)


def formatted_numbers(cells: pd.Series) -> pd.Series:
    """Each non-null cell as a float once formatting characters are removed ("$1,234.50" -> 1234.5)."""
    return _per_distinct_cell(cells, _formatted)


def parse_rate(parsed: pd.Series, present: pd.Series) -> float:
    """Share of the present (non-null) cells that parsed; 1.0 when no cell is present."""
    count = int(present.sum())
    if count == 0:
        return 1.0
    return float(parsed[present].notna().sum()) / count


def _per_distinct_cell(cells: pd.Series, read: Callable[[pd.Series], np.ndarray]) -> pd.Series:
    codes, distinct = pd.factorize(cells)  # a null cell's code is -1
    values = np.append(read(pd.Series(distinct, dtype=object)), np.nan)
    return pd.Series(values[codes], index=cells.index, dtype="float64")


def _plain(distinct: pd.Series) -> np.ndarray:
    parsed = _parsed_as_written(distinct)
    rest = parsed.isna()
    if rest.any():  # what did not parse at once goes through the string path
        parsed[rest] = pd.to_numeric(distinct[rest].astype("string").str.strip(), errors="coerce").astype("float64")
    return parsed.to_numpy()


def _formatted(distinct: pd.Series) -> np.ndarray:
    parsed = _parsed_as_written(distinct)
    parsed[~np.isfinite(parsed)] = np.nan  # "inf" reads as a number as written, as nothing once formatting goes
    rest = parsed.isna()
    if rest.any():
        stripped = distinct[rest].astype("string").str.replace(FORMATTING, "", regex=True)
        parsed[rest] = pd.to_numeric(stripped, errors="coerce").astype("float64")
    return parsed.to_numpy()


def _parsed_as_written(distinct: pd.Series) -> pd.Series:
    """The cells pandas' own parser reads as numbers, in one vectorised pass (the rest NaN)."""
    return pd.to_numeric(distinct, errors="coerce").astype("float64")
