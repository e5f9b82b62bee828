"""The evaluation rows as the workspace sees them: the label column removed, a ``row_id`` column added first.
The labels stay with ModelGuard, keyed by the same row ids."""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from libs.referee.metrics import Task

ROW_ID = "row_id"
MAX_EVALUATION_BYTES = 512 * 1024 * 1024
ROWS_PER_WRITE = 4096
"""Rows split and written together: the csv module's own loop, and a bounded share of the rows in memory."""


class HeldOutError(ValueError):
    """The evaluation rows cannot be split into features and labels (no label column, a clash, no rows)."""


@dataclass(frozen=True)
class HeldLabels:
    """The labels of the evaluation rows, in row-id order (row ``i`` has id ``i``), as the CSV holds them."""

    texts: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.texts)

    def as_targets(self, task: Task, positive_label: str) -> np.ndarray:
        """0/1 per row for classification (1 where the label is ``positive_label``), numbers for regression."""
        if task == "classification":
            positive = normalised_label(positive_label)
            # a label column holds few distinct texts: each is normalised once
            is_positive = {text: int(normalised_label(text) == positive) for text in set(self.texts)}
            return np.array([is_positive[text] for text in self.texts], dtype=int)
        try:
            return np.array([float(text) for text in self.texts], dtype=float)
        except ValueError as error:
            raise HeldOutError(f"a regression metric needs numeric labels: {error}") from error


def normalised_label(text: str) -> str:
    """Labels compare as text; ``1``, ``1.0`` and `` 1`` are the same class, so are ``True`` and ``true``."""
    stripped = text.strip()
    try:
        number = float(stripped)
    except ValueError:
        return stripped.lower()
    return repr(number)


def write_features(evaluation_csv: Path, label: str, features_csv: Path) -> HeldLabels:
    """Write ``evaluation_csv`` without its ``label`` column and with a first ``row_id`` column (0, 1, ...) to
    ``features_csv``; return the labels. Every other cell is copied as its text, unchanged."""
    return split_features(read_evaluation(evaluation_csv), evaluation_csv.name, label, features_csv)


def read_evaluation(evaluation_csv: Path) -> bytes:
    """The evaluation file's bytes; HeldOutError when it is larger than ModelGuard splits."""
    if Path(evaluation_csv).stat().st_size > MAX_EVALUATION_BYTES:
        raise HeldOutError(f"{evaluation_csv.name} is larger than {MAX_EVALUATION_BYTES} bytes")
    return Path(evaluation_csv).read_bytes()


def split_features(data: bytes, name: str, label: str, features_csv: Path) -> HeldLabels:
    """`write_features` over an evaluation file's bytes (`name`: the file's name, for the reasons given)."""
    try:  # read as `Path.read_text` reads a file: newlines made universal
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()
    except UnicodeDecodeError as error:
        raise HeldOutError(f"{name} is not UTF-8 (byte {error.start}: {error.reason})") from None
    try:
        return _split(csv.reader(io.StringIO(text, newline="")), name, label, Path(features_csv))
    except csv.Error as error:  # the reader's own refusal (a cell past its size limit: a quote never closed)
        raise HeldOutError(f"{name} cannot be read as CSV: {error}") from None


def _split(reader: Iterator[list[str]], name: str, label: str, features_csv: Path) -> HeldLabels:
    header = next(reader, None)
    if not header:
        raise HeldOutError(f"{name} has no header row")
    if label not in header:
        raise HeldOutError(f"{name} has no label column {label!r}")
    if ROW_ID in header:
        raise HeldOutError(f"{name} already has a column {ROW_ID!r}, the name ModelGuard adds")
    position, width = header.index(label), len(header)
    labels: list[str] = []
    with features_csv.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow([ROW_ID, *header[:position], *header[position + 1 :]])
        while batch := list(itertools.islice(reader, ROWS_PER_WRITE)):
            first = len(labels)
            for number, row in enumerate(batch, start=first):
                if len(row) != width:
                    raise HeldOutError(f"{name} row {number + 2} has {len(row)} cells, the header {width}")
            labels.extend(row.pop(position) for row in batch)
            writer.writerows([number, *row] for number, row in enumerate(batch, start=first))
    if not labels:
        raise HeldOutError(f"{name} has no rows")
    features_csv.chmod(0o644)
    return HeldLabels(tuple(labels))
