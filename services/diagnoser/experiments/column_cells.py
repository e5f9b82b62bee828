"""One column's raw cells and what the fault checks read of them (null cells, the cells as plain numbers, the
cells as stripped text), each reading made once, on first use: a column's checks used to read its nulls up to
four times and parse its numbers up to three."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd

from services.diagnoser.profiling.numbers import plain_numbers

NULL_TOKENS = frozenset({"", "na", "n/a", "nan", "null", "none", "<na>", "#n/a", "-nan", "nat"})


def is_null(cells: pd.Series) -> pd.Series:
    """Each cell empty or a token that means none, read once per distinct cell (a missing cell is empty)."""
    codes, distinct = pd.factorize(cells)  # a missing cell's code is -1
    text = pd.Series(distinct, dtype=object).astype(str).str.strip().str.lower()
    per_distinct = np.append(text.isin(NULL_TOKENS).to_numpy(dtype=bool), True)
    return pd.Series(per_distinct[codes], index=cells.index, dtype=bool, name=cells.name)


class ColumnCells:
    def __init__(self, cells: pd.Series) -> None:
        self.cells = cells

    def __len__(self) -> int:
        return len(self.cells)

    @cached_property
    def null(self) -> pd.Series:
        """Empty cells and the tokens that mean none ("NA", "null", ...)."""
        return is_null(self.cells)

    @cached_property
    def plain(self) -> pd.Series:
        """Each cell as a number as written (`plain_numbers`), NaN where it is none."""
        return plain_numbers(self.cells)

    @cached_property
    def stripped(self) -> pd.Series:
        """Each cell as text, without surrounding whitespace."""
        return self.cells.astype(str).str.strip()

    @cached_property
    def numeric_share(self) -> float:
        """Share of the non-null cells that are numbers as written (0.0 when every cell is null). A cell's number
        depends on its text alone, so the column's parse, taken at those cells, is theirs."""
        present = ~self.null
        if not present.any():
            return 0.0
        return float(self.plain[present].notna().mean())
