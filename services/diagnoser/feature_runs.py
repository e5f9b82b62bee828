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
        raw = pd.read_csv(written, dtype=str, keep_default_na=False)
    except (WorkspaceCommandFailed, CommandTimedOut, CommandNotAllowed, OSError, ValueError) as error:
        places = {tree: "<revision>", Path(data_csv).parent: "<data>", scratch: "<scratch>"}
        why = f"{revision} revision on the {data_name} data: {failure_text(error, places)}"
        return FeatureMatrix(revision, data_name, None, why)
    return FeatureMatrix(revision, data_name, numeric_matrix(raw))


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


def numeric_matrix(raw: pd.DataFrame) -> pd.DataFrame:
    """Each cell as a float; empty, unparsable and non-finite cells become NaN."""
    numbers = raw.apply(lambda column: pd.to_numeric(column.str.strip(), errors="coerce")).astype("float64")
    return numbers.replace([np.inf, -np.inf], np.nan)


def invalid_counts(raw_numbers: pd.DataFrame) -> dict[str, int]:
    """Per column, the cells that are not finite numbers (only columns that have some)."""
    counts = raw_numbers.isna().sum()
    return {str(name): int(count) for name, count in counts.items() if count}
