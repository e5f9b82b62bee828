"""Column profiles kept by their CSV's bytes: a kept profile is the one a fresh run makes (on every outsider-written
fixture repository's windows), a changed cell or other thresholds profile again, each caller has its own copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.inputs import DataWindow
from services.diagnoser.profiling.column_profile import ColumnProfile, profile_column
from services.diagnoser.profiling.frames import read_text_frame
from services.diagnoser.profiling.profile_cache import WINDOW_PROFILES, ProfileCache
from services.diagnoser.profiling.windows import profile_windows

ROOT = Path(__file__).resolve().parents[3]
REPOS = sorted(path.parent for path in (ROOT / "fixtures" / "repos").glob("*/data"))


def _fresh(path: Path, rate: float = 0.95, categories: int = 20) -> dict[str, ColumnProfile]:
    frame = read_text_frame(path)
    return {str(name): profile_column(str(name), frame[name], rate, categories) for name in frame.columns}


def test_there_are_outsider_windows_to_compare() -> None:
    assert len(REPOS) >= 20


@pytest.mark.parametrize("repo", REPOS, ids=lambda p: p.name)
def test_the_windows_profiles_read_again_are_the_ones_a_fresh_run_makes(repo: Path) -> None:
    thresholds = central_diagnosis_policy()
    approval, incident = (
        DataWindow(name=n, train=repo / "data" / n / "train.csv", eval=repo / "data" / n / "eval.csv")  # type: ignore[arg-type]
        for n in ("approval", "incident")
    )
    WINDOW_PROFILES.clear()
    first = profile_windows(approval, incident, thresholds.numeric_parse_rate, thresholds.max_categories)
    made = WINDOW_PROFILES.misses
    again = profile_windows(approval, incident, thresholds.numeric_parse_rate, thresholds.max_categories)
    assert WINDOW_PROFILES.misses == made and WINDOW_PROFILES.hits == 4  # all four files from the cache
    for before, after in zip(first, again, strict=True):
        assert after.reference_profiles == before.reference_profiles
        assert after.current_profiles == before.current_profiles
        assert after.reference_profiles == _fresh(
            before_path := getattr(approval, before.split), thresholds.numeric_parse_rate, thresholds.max_categories
        ), before_path


def test_a_changed_cell_or_other_thresholds_are_profiled_again_and_copies_are_private(tmp_path: Path) -> None:
    cache = ProfileCache(capacity=2)
    path = tmp_path / "window.csv"
    path.write_text("amount,tier\n1.5,gold\n2.5,silver\n,gold\n")
    made: list[str] = []

    def make(rate: float = 0.95) -> dict[str, ColumnProfile]:
        made.append(path.read_text())
        return _fresh(path, rate)

    first = cache.profiles(path, 0.95, 20, make)
    first["tier"].categories["platinum"] = 99  # a caller changing its copy
    assert cache.profiles(path, 0.95, 20, make) == _fresh(path) and len(made) == 1
    path.write_text("amount,tier\n1.5,gold\n2.5,silver\nn/a,gold\n")  # one cell
    changed = cache.profiles(path, 0.95, 20, make)
    assert len(made) == 2 and changed == _fresh(path) and changed != first
    cache.profiles(path, 0.5, 20, lambda: make(0.5))  # other thresholds: another entry, which evicts the oldest
    assert len(made) == 3
    path.write_text("amount,tier\n1.5,gold\n2.5,silver\n,gold\n")
    cache.profiles(path, 0.95, 20, make)
    assert len(made) == 4  # evicted (capacity 2), so profiled again
