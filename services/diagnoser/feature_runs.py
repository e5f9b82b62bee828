"""Run a revision's ``features`` command on one data file and read the matrix it wrote. Outputs go to a
scratch folder outside both trees; a failed or absent command is reported (with the tree, data and scratch
folders taken out of the text), never raised."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from libs.workspace.commands import WorkspaceCommandFailed, build_features
from libs.workspace.runner import SANDBOX_NOTE, CommandNotAllowed, CommandTimedOut
from services.diagnoser.inputs import WorkspaceConfig

ERROR_CHARS = 400


@dataclass(frozen=True)
class FeatureMatrix:
    """A feature matrix as numbers (unparsable cells are NaN) with the counts of its invalid cells."""

    revision: str
    data: str
    frame: pd.DataFrame | None
    error: str | None = None

    @property
    def available(self) -> bool:
        return self.frame is not None


def run_features(
    revision: str, tree: Path, data_csv: Path, data_name: str, workspace: WorkspaceConfig, scratch: Path
) -> FeatureMatrix:
    if workspace.features is None:
        return FeatureMatrix(revision, data_name, None, "the workspace config has no features command")
    out = scratch / f"{revision}-{data_name}-features.csv"
    try:
        written = build_features(tree, data_csv, out, workspace.command_spec())
        matrix = read_matrix(written)
    except (WorkspaceCommandFailed, CommandTimedOut, CommandNotAllowed, OSError, ValueError) as error:
        places = {tree: "<revision>", Path(data_csv).parent: "<data>", scratch: "<scratch>"}
        why = f"{revision} revision on the {data_name} data: {failure_text(error, places)}"
        return FeatureMatrix(revision, data_name, None, why)
    return FeatureMatrix(revision, data_name, matrix)


def failure_text(error: Exception, places: dict[Path, str]) -> str:
    """Why the command gave no matrix: for a failed command its reason and the last lines of its stderr (where
    the exception is; the sandbox's own note goes into the reason), else the error. Every folder of ``places``
    is replaced by its placeholder, so the same failure reads the same whatever scratch folder it ran in."""
    if not isinstance(error, WorkspaceCommandFailed):
        return f"{type(error).__name__}: {_scrubbed(str(error), places)[:ERROR_CHARS]}"
    result = error.result
    head = f"the {error.name} command failed: {_scrubbed(error.reason, places)}"
    if result is None:
        return head
    if result.failure_reason:
        head += f" ({result.failure_reason})"
    lines = [line for line in _scrubbed(result.stderr, places).splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith(SANDBOX_NOTE)]
    kept: list[str] = []
    while lines and sum(len(line) + 1 for line in kept) + len(lines[-1]) <= ERROR_CHARS:
        kept.insert(0, lines.pop())
    if not kept and lines:
        kept = [lines[-1][-ERROR_CHARS:]]
    return head + ("; stderr ends:\n" + "\n".join(kept) if kept else "")


def _scrubbed(text: str, places: dict[Path, str]) -> str:
    spellings = {spelling: name for folder, name in places.items() for spelling in (str(folder), str(folder.resolve()))}
    for spelling in sorted(spellings, key=len, reverse=True):
        text = text.replace(spelling, spellings[spelling])
    return text


def read_matrix(path: Path) -> pd.DataFrame:
    """The matrix a features command wrote, each cell a float (empty, unparsable and non-finite cells NaN). When the
    CSV parser reads every cell as a float, its numbers are taken (about a fifth of the time: 1.9 against 10.6 ms for
    1,600 rows of 12 features); else, or when it took a column for the index or a cell reads as a negative zero, each
    cell is read on its own (``numeric_matrix``), which gives the same numbers, bit for bit, for every cell the parser
    reads but ``-0`` (``tests/unit/diagnoser/test_feature_matrix_reading.py``). A file neither can read raises what
    the cell-by-cell reading raises."""
    try:
        numbers = pd.read_csv(path, dtype="float64", keep_default_na=False, na_values=[""])
    except ValueError:  # a cell that is not a float (text, a number with a thousands separator, ...), or no table
        numbers = None
    if numbers is None or not isinstance(numbers.index, pd.RangeIndex) or _negative_zero(numbers):
        return numeric_matrix(pd.read_csv(path, dtype=str, keep_default_na=False))
    return numbers.replace([np.inf, -np.inf], np.nan)


def _negative_zero(numbers: pd.DataFrame) -> bool:
    """Whether a cell reads as -0.0: the cell-by-cell reading gives 0.0 for ``-0`` (an integer) and -0.0 for ``-0.0``,
    which the parser's numbers no longer tell apart."""
    values = numbers.to_numpy()
    return bool(np.any((values == 0) & np.signbit(values)))


def numeric_matrix(raw: pd.DataFrame) -> pd.DataFrame:
    """Each cell as a float; empty, unparsable and non-finite cells become NaN."""
    numbers = raw.apply(lambda column: pd.to_numeric(column.str.strip(), errors="coerce")).astype("float64")
    return numbers.replace([np.inf, -np.inf], np.nan)


def invalid_counts(raw_numbers: pd.DataFrame) -> dict[str, int]:
    """Per column, the cells that are not finite numbers (only columns that have some)."""
    counts = raw_numbers.isna().sum()
    return {str(name): int(count) for name, count in counts.items() if count}
