"""One column's raw cells and what the fault checks read of them (null cells, the cells as plain numbers, the
cells as stripped text), each reading made once, on first use: a column's checks used to read its nulls up to
four times and parse its numbers up to three.

A column read as text (a string dtype, as the diagnoser reads every window) is told apart into its distinct cells
once, and each reading is made on those and spread back to the cells: a window holds few distinct cells per column
beside its rows, and every reading of a cell depends on its text alone. Stripping every cell one by one took most
of the quality evidence's time. A column of Python objects is read cell by cell for its text: there, cells that
compare equal can still read apart (1, 1.0 and True are one distinct cell and three texts)."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd
from pandas.api.extensions import take

from services.diagnoser.profiling.numbers import Factorized, plain_numbers

NULL_TOKENS = frozenset({"", "na", "n/a", "nan", "null", "none", "<na>", "#n/a", "-nan", "nat"})


def is_null(cells: pd.Series) -> pd.Series:
    """Each cell empty or a token that means none, read once per distinct cell (a missing cell is empty)."""
    codes, distinct = pd.factorize(cells)  # a missing cell's code is -1
    return _nulls(codes, stripped_texts(distinct), cells)


def stripped_texts(distinct: pd.Index) -> list[str]:
    """Each distinct cell as text (`astype(str)`), without surrounding whitespace: `str.strip`, which is what
    pandas' `.str.strip()` calls on each cell, called here without pandas' per-cell wrapping."""
    return [text.strip() for text in pd.Series(distinct, dtype=object).astype(str)]


def _nulls(codes: np.ndarray, texts: list[str], cells: pd.Series) -> pd.Series:
    per_distinct = np.fromiter((text.lower() in NULL_TOKENS for text in texts), dtype=bool, count=len(texts))
    return pd.Series(np.append(per_distinct, True)[codes], index=cells.index, dtype=bool, name=cells.name)


class ColumnCells:
    def __init__(self, cells: pd.Series) -> None:
        self.cells = cells

    def __len__(self) -> int:
        return len(self.cells)

    @cached_property
    def factorized(self) -> Factorized:
        """The column told apart into its distinct cells, once for every reading."""
        return pd.factorize(self.cells)

    @cached_property
    def texts(self) -> list[str]:
        """Each distinct cell's stripped text (`stripped_texts`), in the order of `factorized`."""
        return stripped_texts(self.factorized[1])

    @cached_property
    def null(self) -> pd.Series:
        """Empty cells and the tokens that mean none ("NA", "null", ...): `is_null`."""
        return _nulls(self.factorized[0], self.texts, self.cells)

    @cached_property
    def plain(self) -> pd.Series:
        """Each cell as a number as written (`plain_numbers`), NaN where it is none."""
        return plain_numbers(self.cells, factorized=self.factorized)

    @cached_property
    def stripped(self) -> pd.Series:
        """Each cell as text, without surrounding whitespace (`cells.astype(str).str.strip()`)."""
        if not isinstance(self.cells.dtype, pd.StringDtype):
            return self.cells.astype(str).str.strip()
        per_distinct = pd.array(self.texts, dtype=pd.Series(self.cells[:0]).astype(str).dtype)
        # a missing cell's code is -1: it takes the text dtype's missing value, as astype(str) leaves it
        spread = take(per_distinct, self.factorized[0], allow_fill=True)
        return pd.Series(spread, index=self.cells.index, name=self.cells.name)

    @cached_property
    def numeric_share(self) -> float:
        """Share of the non-null cells that are numbers as written (0.0 when every cell is null). A cell's number
        depends on its text alone, so the column's parse, taken at those cells, is theirs."""
        present = ~self.null
        if not present.any():
            return 0.0
        return float(self.plain[present].notna().mean())
