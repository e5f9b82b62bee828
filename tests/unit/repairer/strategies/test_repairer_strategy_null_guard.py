"""null_guard: the declared fill replaces nulls where the column is read, and nowhere else."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from contracts.events.diagnosis import RepairHints
from services.repairer.strategies import null_guard
from tests.unit.repairer.strategies.patched_trees import (
    diff_lines,
    edit_of,
    git_applied,
    load_module,
    refusal_of,
    repair_context,
)

FEATURES = "pkg/features.py"
HINTS = RepairHints(null_columns=["tenure_months"])
FILLS = {"tenure_months": 0}
PANDAS_SOURCE = '''import pandas as pd


def features(frame: pd.DataFrame) -> pd.DataFrame:
    """Tenure in years."""
    out = pd.DataFrame(index=frame.index)
    out["tenure_years"] = frame["tenure_months"].astype(int) / 12
    out["spend"] = frame["spend"]
    return out


def load(path) -> float:
    frame = pd.read_csv(path)
    return frame["tenure_months"].mean()
'''
RECORD_SOURCE = """import csv


def tenures(path) -> list[int]:
    with open(path, newline="") as handle:
        return [int(record["tenure_months"]) for record in csv.DictReader(handle)]
"""


def context_for(tmp_path: Path, source: str, fills: dict[str, object] = FILLS):  # type: ignore[no-untyped-def]
    return repair_context(tmp_path, {FEATURES: source}, hypothesis="source_data_quality", hints=HINTS, null_fills=fills)


def test_a_frame_parameter_is_filled_at_the_start_and_other_reads_at_the_read(tmp_path: Path) -> None:
    edit = edit_of(null_guard.propose(context_for(tmp_path, PANDAS_SOURCE)))
    assert diff_lines(edit.unified_diff) == [
        '+    frame = frame.fillna({"tenure_months": 0})',
        '-    return frame["tenure_months"].mean()',
        '+    return frame["tenure_months"].fillna(0).mean()',
    ]
    module = load_module(git_applied(tmp_path, {FEATURES: PANDAS_SOURCE}, edit.unified_diff) / FEATURES)
    frame = pd.DataFrame({"tenure_months": [24, None, 6], "spend": [1.0, None, 3.0]})
    out = module.features(frame)
    assert out["tenure_years"].tolist() == [2.0, 0.0, 0.5]
    assert math.isnan(out["spend"][1]) and frame["tenure_months"].isna().sum() == 1
    extract = tmp_path / "x.csv"
    frame.to_csv(extract, index=False)
    assert module.load(extract) == 10.0


def test_a_record_field_converted_to_a_number_takes_the_fill_when_blank(tmp_path: Path) -> None:
    edit = edit_of(null_guard.propose(context_for(tmp_path, RECORD_SOURCE)))
    assert diff_lines(edit.unified_diff)[-1] == (
        '+        return [int(record["tenure_months"] or 0) for record in csv.DictReader(handle)]'
    )
    module = load_module(git_applied(tmp_path, {FEATURES: RECORD_SOURCE}, edit.unified_diff) / FEATURES)
    extract = tmp_path / "x.csv"
    extract.write_text("tenure_months,plan\n12,basic\n,basic\n3,premium\n", encoding="utf-8")
    assert module.tenures(extract) == [12, 0, 3]


def test_refuses_when_no_read_of_the_column_can_take_the_fill(tmp_path: Path) -> None:
    source = "def tenure(record):\n    return record['tenure_months'].strip()\n"
    assert "no permitted file reads tenure_months" in refusal_of(null_guard.propose(context_for(tmp_path, source)))
