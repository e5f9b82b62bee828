"""A bundle's data windows checked on load, before any code runs on them: each CSV has a header of distinct
names, every row has as many cells as the header, and the label column is there. A broken file gets one line
naming the file and the row, not a traceback from the workspace's own reader."""

from __future__ import annotations

import csv
from pathlib import Path


class DataShapeError(ValueError):
    pass


def check_csv_shape(path: Path, label: str | None, shown_as: str) -> int:
    """The number of data rows of a well-shaped CSV; ``DataShapeError`` otherwise."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if not header or not any(name.strip() for name in header):
                raise DataShapeError(f"{shown_as}: no header row")
            seen: set[str] = set()
            for name in header:
                if name in seen:
                    raise DataShapeError(f"{shown_as}: the header names column {name!r} twice")
                seen.add(name)
            if label is not None and label not in seen:
                raise DataShapeError(f"{shown_as}: no label column {label!r} in the header")
            rows = 0
            for row in reader:
                if not row:
                    continue
                rows += 1
                if len(row) != len(header):
                    raise DataShapeError(
                        f"{shown_as}: row {reader.line_num} has {len(row)} cells, the header {len(header)}"
                    )
    except UnicodeDecodeError as exc:
        raise DataShapeError(f"{shown_as}: not UTF-8 text (byte {exc.start})") from exc
    except csv.Error as exc:
        raise DataShapeError(f"{shown_as}: not CSV: {exc}") from exc
    return rows
