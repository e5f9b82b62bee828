"""The two windows' CSVs read once and profiled per column: the approval window is the reference, the
incident window the current sample, compared split by split (train with train, eval with eval)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Literal

import pandas as pd

from services.diagnoser.inputs import DataWindow
from services.diagnoser.profiling.column_profile import ColumnProfile, profile_column
from services.diagnoser.profiling.frames import read_text_frame, read_window_files, window_files
from services.diagnoser.profiling.profile_cache import WINDOW_PROFILES

Split = Literal["train", "eval"]


@dataclass(frozen=True)
class ProfiledPair:
    split: Split
    reference: pd.DataFrame
    current: pd.DataFrame
    reference_profiles: dict[str, ColumnProfile]
    current_profiles: dict[str, ColumnProfile]

    @property
    def gone_columns(self) -> list[str]:
        return [name for name in self.reference.columns if name not in self.current.columns]

    @property
    def new_columns(self) -> list[str]:
        return [name for name in self.current.columns if name not in self.reference.columns]

    @property
    def shared_columns(self) -> list[str]:
        return [name for name in self.reference.columns if name in self.current.columns]


def profile_windows(
    approval: DataWindow, incident: DataWindow, numeric_parse_rate: float, max_categories: int
) -> tuple[ProfiledPair, ...]:
    """(train pair, eval pair), each with every column of both sides profiled (a file profiled before with these
    thresholds is read from ``WINDOW_PROFILES``). ``UnreadableWindows`` when a file cannot be read as a table."""
    approval_train, approval_eval, incident_train, incident_eval = read_window_files(
        window_files(approval, incident), read_text_frame
    )
    frames = {"train": (approval_train, incident_train), "eval": (approval_eval, incident_eval)}
    pairs = []
    for split in ("train", "eval"):
        reference_path, current_path = getattr(approval, split), getattr(incident, split)
        reference, current = frames[split]
        pairs.append(
            ProfiledPair(
                split=split,
                reference=reference,
                current=current,
                reference_profiles=WINDOW_PROFILES.profiles(
                    reference_path,
                    numeric_parse_rate,
                    max_categories,
                    partial(_profiles, reference, numeric_parse_rate, max_categories),
                ),
                current_profiles=WINDOW_PROFILES.profiles(
                    current_path,
                    numeric_parse_rate,
                    max_categories,
                    partial(_profiles, current, numeric_parse_rate, max_categories),
                ),
            )
        )
    return tuple(pairs)


def all_columns(pairs: tuple[ProfiledPair, ...]) -> set[str]:
    return {str(name) for pair in pairs for frame in (pair.reference, pair.current) for name in frame.columns}


def _profiles(frame: pd.DataFrame, numeric_parse_rate: float, max_categories: int) -> dict[str, ColumnProfile]:
    return {
        str(name): profile_column(str(name), frame[name], numeric_parse_rate, max_categories) for name in frame.columns
    }


def relevant_columns(pairs: tuple[ProfiledPair, ...], read_columns: list[str], label: str) -> list[str]:
    """The columns the model's code reads; every column but the label when the code names none."""
    if read_columns:
        return sorted(read_columns)
    return sorted(name for name in all_columns(pairs) if name != label)
