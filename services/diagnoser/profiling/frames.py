"""Reading a CSV as text cells, so the profile sees what arrived rather than what a parser made of it.

The windows come from outside (a pull request, an upstream extract): a file pandas cannot read as a table (no
columns, a row longer than the header, an unterminated quote, binary bytes) is named in ``UnreadableWindows``
with pandas' reason, for the diagnosis to report its data evidence as unavailable rather than stop; so is one
larger than MAX_WINDOW_FILE_BYTES, which is not read (pandas holds a file of text cells in several times its
size)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from libs.workspace.data_windows import DataWindow

ERROR_CHARS = 300
MAX_WINDOW_FILE_BYTES = 512 * 1024 * 1024
"""As the referee bounds an evaluation file (``libs/referee/held_out.py``) and the stack a windows archive."""


def read_text_frame(path: Path) -> pd.DataFrame:
    """Every cell as a string; empty cells and the usual null spellings are missing (NaN). Bytes that are not UTF-8
    (an extract in Latin-1, which the model may read with its own encoding) are read as U+FFFD, as they arrived."""
    return pd.read_csv(Path(path), dtype=str, keep_default_na=True, encoding="utf-8", encoding_errors="replace")


@dataclass(frozen=True)
class UnreadableFile:
    name: str
    """As the windows name it: ``incident/train.csv``."""
    error: str
    """pandas' reason, on one line."""


class UnreadableWindows(ValueError):
    """Window files pandas cannot read as a table, each with its reason."""

    def __init__(self, files: Sequence[UnreadableFile]) -> None:
        self.files = tuple(files)
        super().__init__("; ".join(f"{file.name} cannot be read as a table: {file.error}" for file in self.files))

    def as_dicts(self) -> list[dict[str, str]]:
        return [{"file": file.name, "error": file.error} for file in self.files]


WindowFile = tuple[str, Path]


def window_files(*windows: DataWindow) -> tuple[WindowFile, ...]:
    """Each window's training then evaluation file, with the name the reasons give it (``approval/eval.csv``)."""
    return tuple(
        (f"{window.name}/{Path(path).name}", Path(path)) for window in windows for path in (window.train, window.eval)
    )


def read_window_files(
    files: Sequence[WindowFile], read: Callable[[Path], pd.DataFrame], max_bytes: int = MAX_WINDOW_FILE_BYTES
) -> list[pd.DataFrame]:
    """Every file read by ``read``, in order; ``UnreadableWindows`` naming each one it cannot read (pandas' parser
    errors, ``EmptyDataError`` and ``ParserError``, are ValueErrors) or that is larger than ``max_bytes``."""
    frames: list[pd.DataFrame] = []
    unreadable: list[UnreadableFile] = []
    for name, path in files:
        size = Path(path).stat().st_size
        if size > max_bytes:
            unreadable.append(UnreadableFile(name, f"{size} bytes, more than the {max_bytes} a window file may be"))
            continue
        try:
            frames.append(read(path))
        except ValueError as error:
            unreadable.append(UnreadableFile(name, _one_line(error, path, name)))
    if unreadable:
        raise UnreadableWindows(unreadable)
    return frames


def readable_columns(files: Sequence[WindowFile]) -> set[str]:
    """The column names in the header rows pandas can read, of every file (the rows below are not read)."""
    names: set[str] = set()
    for _, path in files:
        if Path(path).stat().st_size > MAX_WINDOW_FILE_BYTES:  # its first line could be all of it
            continue
        try:
            header = pd.read_csv(path, dtype=str, nrows=0, encoding="utf-8", encoding_errors="replace")
        except ValueError:
            continue
        names.update(str(name) for name in header.columns)
    return names


def _one_line(error: ValueError, path: Path, name: str) -> str:
    text = " ".join(str(error).replace(str(path), name).split()) or type(error).__name__
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 1] + "…"
