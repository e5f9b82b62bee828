"""Reading a CSV as text cells, so the profile sees what arrived rather than what a parser made of it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def read_text_frame(path: Path) -> pd.DataFrame:
    """Every cell as a string; empty cells and the usual null spellings are missing (NaN)."""
    return pd.read_csv(Path(path), dtype=str, keep_default_na=True)
