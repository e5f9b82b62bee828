"""Data checks ModelGuard computes itself, never trusting the workspace's own report: invalid cells
in a feature matrix."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class InvalidValueCount:
    """``total`` invalid cells over ``rows`` data rows; ``by_column`` lists only columns that have some."""

    total: int
    by_column: dict[str, int] = field(default_factory=dict)
    rows: int = 0


def parse_number(cell: str) -> float | None:
    """The cell as a finite float, or None when it is empty, unparsable, NaN or infinite."""
    try:
        value = float(cell)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def count_invalid_values(features_csv: Path) -> InvalidValueCount:
    """Count cells of a numeric feature matrix (header row first) that are not finite numbers;
    missing cells of a short row count as invalid. The matrix is the workspace's output: a file that is not UTF-8
    or that the csv module refuses is a ValueError with the reason."""
    name = Path(features_csv).name
    try:
        with Path(features_csv).open(newline="", encoding="utf-8") as handle:
            return _counted(csv.reader(handle), features_csv)
    except UnicodeDecodeError as error:
        raise ValueError(f"{name} is not UTF-8 (byte {error.start}: {error.reason})") from None
    except csv.Error as error:  # the reader's own refusal (a cell past its size limit: a quote never closed)
        raise ValueError(f"{name} cannot be read as CSV: {error}") from None


def _counted(reader: Iterator[list[str]], features_csv: Path) -> InvalidValueCount:
    header = next(reader, None)
    if not header:
        raise ValueError(f"{features_csv} has no header row")
    counts = [0] * len(header)
    rows = 0
    for row in reader:
        if not row:
            continue
        rows += 1
        for index in range(len(header)):
            cell = row[index] if index < len(row) else ""
            if parse_number(cell) is None:
                counts[index] += 1
    by_column = {name: count for name, count in zip(header, counts, strict=True) if count}
    return InvalidValueCount(total=sum(counts), by_column=by_column, rows=rows)
