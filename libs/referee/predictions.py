"""Read what a workspace's ``predict`` wrote, strictly: the header ``row_id,prediction``, exactly one finite
number for every row id ModelGuard handed out, nothing else. Anything else fails the run with its reason.

A file that keeps the contract is read in bulk (``_read_in_bulk``: every cell converted at once, then checked as
arrays); anything it does not accept is read again row by row (``_read_row_by_row``), which names the first fault
and its line. The bulk reading accepts exactly what the row-by-row one does (``tests/unit/referee``), and reads 2,000
predictions in 1.6 ms against 2.15 (medians of 30 alternating reads on the 2-core machine), on the referee's path
after every ``predict``."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from libs.referee.held_out import ROW_ID

PREDICTION = "prediction"
HEADER = (ROW_ID, PREDICTION)
MAX_PREDICTIONS_BYTES = 64 * 1024 * 1024


class MalformedPredictions(ValueError):
    """The predictions file breaks the contract; the message says how, without echoing its content at length."""


def read_predictions(path: Path, rows: int) -> np.ndarray:
    """The predictions for row ids ``0 .. rows - 1``, in row-id order."""
    path = Path(path)
    if not path.is_file():
        raise MalformedPredictions("no predictions file was written")
    if path.stat().st_size > MAX_PREDICTIONS_BYTES:
        raise MalformedPredictions(f"the predictions file is larger than {MAX_PREDICTIONS_BYTES} bytes")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise MalformedPredictions("the predictions file is not UTF-8 text") from error
    try:
        records = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as error:  # the reader's own refusal (a cell past its size limit: a quote never closed)
        raise MalformedPredictions(f"the predictions file is not CSV: {error}") from None
    header = tuple(cell.strip() for cell in (records[0] if records else ()))
    if sorted(header) != sorted(HEADER):
        raise MalformedPredictions(f"the header must be {','.join(HEADER)} (got {len(header)} column(s))")
    id_at, value_at = header.index(ROW_ID), header.index(PREDICTION)
    body = records[1:]
    in_bulk = _read_in_bulk(body, id_at, value_at, rows)
    return in_bulk if in_bulk is not None else _read_row_by_row(body, id_at, value_at, rows)


def _read_in_bulk(body: list[list[str]], id_at: int, value_at: int, rows: int) -> np.ndarray | None:
    """The predictions when the file keeps the contract: one row of two cells for each of the ``rows`` ids, each id
    once, every prediction a finite number. None for anything else (``_read_row_by_row`` then names the fault)."""
    kept = [row for row in body if row]
    if len(kept) != rows or any(len(row) != 2 for row in kept):
        return None
    try:
        ids = np.array([int(row[id_at].strip()) for row in kept], dtype=np.int64)
        values = np.array([float(row[value_at].strip()) for row in kept], dtype=float)
    except (ValueError, OverflowError):  # not a number, or an id past int64
        return None
    if rows and (ids.min() < 0 or ids.max() >= rows):
        return None
    seen = np.zeros(rows, dtype=bool)
    seen[ids] = True
    if not seen.all() or not np.isfinite(values).all():  # as many rows as ids and none missing: none twice
        return None
    ordered = np.empty(rows)
    ordered[ids] = values
    return ordered


def _read_row_by_row(body: list[list[str]], id_at: int, value_at: int, rows: int) -> np.ndarray:
    values = np.full(rows, np.nan)
    seen = np.zeros(rows, dtype=bool)
    for line, row in enumerate(body, start=2):
        if not row:
            continue
        if len(row) != 2:
            raise MalformedPredictions(f"line {line} has {len(row)} cells, not 2")
        row_id, value = _row_id(row[id_at], line, rows), _finite(row[value_at], line)
        if seen[row_id]:
            raise MalformedPredictions(f"row_id {row_id} appears twice (line {line})")
        seen[row_id], values[row_id] = True, value
    missing = int((~seen).sum())
    if missing:
        first = int(np.flatnonzero(~seen)[0])
        raise MalformedPredictions(f"{missing} of {rows} rows have no prediction (the first: row_id {first})")
    return values


def _row_id(text: str, line: int, rows: int) -> int:
    try:
        number = int(text.strip())
    except ValueError:
        raise MalformedPredictions(f"line {line}: row_id is not an integer") from None
    if not 0 <= number < rows:
        raise MalformedPredictions(f"line {line}: row_id {number} was never handed out (0..{rows - 1})")
    return number


def _finite(text: str, line: int) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise MalformedPredictions(f"line {line}: prediction is not a number") from None
    if not math.isfinite(value):
        raise MalformedPredictions(f"line {line}: prediction is not finite")
    return value
