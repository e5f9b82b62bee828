"""New point masses (sentinels) in a numeric column: the search looks only at values common enough to count, and
finds exactly what checking every value of the incident window finds."""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd
import pytest

from libs.policy.diagnosis import DiagnosisPolicy, central_diagnosis_policy
from services.diagnoser.experiments.column_cells import NULL_TOKENS, ColumnCells
from services.diagnoser.experiments.column_faults import POINT_MASS_RATIO, _new_point_masses, _rise

POLICY = central_diagnosis_policy()


def every_value(before: ColumnCells, after: ColumnCells, thresholds: DiagnosisPolicy) -> list[str]:
    """The rule checked on each distinct value of the incident window, one by one."""
    b, a = before.stripped, after.stripped
    shares_before, shares_after = b.value_counts(normalize=True), a.value_counts(normalize=True)
    typical = float(shares_after.median()) if len(shares_after) else 0.0
    found = []
    for value, share in shares_after.items():
        if str(value).lower() in NULL_TOKENS or float(share) < POINT_MASS_RATIO * typical:
            continue
        earlier = float(shares_before.get(value, 0.0))
        if earlier < thresholds.rate_rise and _rise(earlier, float(share), (len(b), len(a)), thresholds):
            found.append(str(value))
    return sorted(found)[:5]


def column(rng: np.random.Generator, rows: int, sentinels: dict[str, float], distinct: int) -> pd.Series:
    cells = rng.integers(0, distinct, rows).astype(str).astype(object)
    for value, share in sentinels.items():
        cells[rng.random(rows) < share] = value
    return pd.Series(cells)


CASES = {
    "one sentinel in many values": ({}, {"-999": 0.2}, 5000),
    "a sentinel the approval window had": ({"-1": 0.15}, {"-1": 0.2}, 5000),
    "null tokens pile up": ({}, {"NA": 0.3, "null": 0.1}, 5000),
    "six sentinels, five kept": ({}, {str(v): 0.06 for v in (-1, -2, -3, -4, -5, -6)}, 8000),
    "few values (a flag)": ({}, {}, 2),
    "a rare new value": ({}, {"-7": 0.001}, 5000),
    "just under the rise": ({}, {"0.5": 0.049}, 20000),
    "padded text": ({}, {" -999 ": 0.25}, 300),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("rate_rise", [0.0, 0.02, 0.05, 0.3])
def test_the_search_finds_what_checking_every_value_finds(name: str, rate_rise: float) -> None:
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    earlier, now, distinct = CASES[name]
    before = ColumnCells(column(rng, 4000, earlier, distinct))
    after = ColumnCells(column(rng, 4000, now, distinct))
    thresholds = POLICY.model_copy(update={"rate_rise": rate_rise})
    assert _new_point_masses(before, after, thresholds) == every_value(before, after, thresholds)


def test_a_sentinel_is_found() -> None:
    rng = np.random.default_rng(3)
    before, after = ColumnCells(column(rng, 4000, {}, 5000)), ColumnCells(column(rng, 4000, {"-999": 0.2}, 5000))
    assert _new_point_masses(before, after, POLICY) == ["-999"]
