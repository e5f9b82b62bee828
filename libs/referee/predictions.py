"""Read what a workspace's ``predict`` wrote, strictly: the header ``row_id,prediction``, exactly one finite
number for every row id ModelGuard handed out, nothing else. Anything else fails the run with its reason."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
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
        return _values(csv.reader(io.StringIO(text, newline="")), rows)
    except csv.Error as error:  # the reader's own refusal (a cell past its size limit: a quote never closed)
        raise MalformedPredictions(f"the predictions file is not CSV: {error}") from None


def _values(reader: Iterator[list[str]], rows: int) -> np.ndarray:
    header = tuple(cell.strip() for cell in next(reader, ()))
    if sorted(header) != sorted(HEADER):
        raise MalformedPredictions(f"the header must be {','.join(HEADER)} (got {len(header)} column(s))")
    id_at, value_at = header.index(ROW_ID), header.index(PREDICTION)
    values = np.full(rows, np.nan)
    seen = np.zeros(rows, dtype=bool)
    for line, row in enumerate(reader, start=2):
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
