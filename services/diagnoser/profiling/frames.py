"""Reading a CSV as text cells, so the profile sees what arrived rather than what a parser made of it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def read_text_frame(path: Path) -> pd.DataFrame:
    """Every cell as a string; empty cells and the usual null spellings are missing (NaN). Bytes that are not UTF-8
    (an extract in Latin-1, which the model may read with its own encoding) are read as U+FFFD, as they arrived."""
    return pd.read_csv(Path(path), dtype=str, keep_default_na=True, encoding="utf-8", encoding_errors="replace")
