"""Reading text cells as numbers: plainly, and after stripping the formatting people put around numbers
(currency signs, thousands separators, units, percent signs)."""

from __future__ import annotations

import pandas as pd

FORMATTING = r"[^0-9.eE+\-]"


def plain_numbers(cells: pd.Series) -> pd.Series:
    """Each non-null cell as a float, NaN where it does not parse as a number as written."""
    return pd.to_numeric(cells.astype("string").str.strip(), errors="coerce").astype("float64")


def formatted_numbers(cells: pd.Series) -> pd.Series:
    """Each non-null cell as a float once formatting characters are removed ("$1,234.50" -> 1234.5)."""
    stripped = cells.astype("string").str.replace(FORMATTING, "", regex=True)
    return pd.to_numeric(stripped, errors="coerce").astype("float64")


def parse_rate(parsed: pd.Series, present: pd.Series) -> float:
    """Share of the present (non-null) cells that parsed; 1.0 when no cell is present."""
    count = int(present.sum())
    if count == 0:
        return 1.0
    return float(parsed[present].notna().sum()) / count
