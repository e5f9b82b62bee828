"""The profile of one column of text cells: its type class, nulls, zeros, distinct values and range."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

import pandas as pd

from services.diagnoser.profiling.numbers import cell_numbers, parse_rate

TypeClass = Literal["numeric", "numeric_text", "text", "empty"]
QUANTILES = (0.01, 0.25, 0.5, 0.75, 0.99)


@dataclass(frozen=True)
class ColumnProfile:
    name: str
    rows: int
    type_class: TypeClass
    nulls: int
    zeros: int
    distinct: int
    numeric_parse_rate: float
    formatted_parse_rate: float
    minimum: float | None = None
    maximum: float | None = None
    quantiles: dict[str, float] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)
    """Value counts of a low-cardinality text column; empty otherwise."""

    @property
    def null_rate(self) -> float:
        return self.nulls / self.rows if self.rows else 0.0

    @property
    def zero_rate(self) -> float:
        return self.zeros / self.rows if self.rows else 0.0

    def summary(self) -> dict[str, object]:
        return {
            "type_class": self.type_class,
            "rows": self.rows,
            "null_rate": round(self.null_rate, 4),
            "zero_rate": round(self.zero_rate, 4),
            "distinct": self.distinct,
            "numeric_parse_rate": round(self.numeric_parse_rate, 4),
            "min": self.minimum,
            "max": self.maximum,
        }


def profile_column(name: str, cells: pd.Series, numeric_parse_rate: float, max_categories: int) -> ColumnProfile:
    """Profile ``cells``; a column is numeric when at least ``numeric_parse_rate`` of its present cells parse,
    numeric-looking text when they parse only once formatting is stripped, text otherwise."""
    present = cells.notna()
    numbers = cell_numbers(cells)
    plain, formatted = numbers.plain, numbers.formatted
    plain_rate = parse_rate(plain, present)
    formatted_rate = parse_rate(formatted, present)
    type_class: TypeClass
    if not present.any():
        type_class = "empty"
    elif plain_rate >= numeric_parse_rate:
        type_class = "numeric"
    elif formatted_rate >= numeric_parse_rate:
        type_class = "numeric_text"
    else:
        type_class = "text"
    values = plain if type_class == "numeric" else formatted if type_class == "numeric_text" else None
    distinct = numbers.distinct
    profile = ColumnProfile(
        name=name,
        rows=len(cells),
        type_class=type_class,
        nulls=int((~present).sum()),
        zeros=int((values == 0).sum()) if values is not None else 0,
        distinct=distinct,
        numeric_parse_rate=round(plain_rate, 6),
        formatted_parse_rate=round(formatted_rate, 6),
    )
    if values is not None and values.notna().any():
        finite = values.dropna()
        return _with_range(profile, finite)
    if type_class == "text" and distinct <= max_categories:
        counts = cells[present].value_counts()
        return replace(profile, categories={str(key): int(count) for key, count in counts.items()})
    return profile


def _with_range(profile: ColumnProfile, values: pd.Series) -> ColumnProfile:
    at = values.quantile(list(QUANTILES))  # all at once: the same figures as one call per quantile
    quantiles = {f"q{int(q * 100):02d}": round(float(at[q]), 6) for q in QUANTILES}
    return replace(
        profile, minimum=round(float(values.min()), 6), maximum=round(float(values.max()), 6), quantiles=quantiles
    )
