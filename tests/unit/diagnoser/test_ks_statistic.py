"""The two-sample KS statistic, computed directly: exactly the number scipy's `ks_2samp` gives, on samples of every
shape the diagnoser compares (ties, different sizes, one value, infinities, missing values)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ks_2samp

from services.diagnoser.profiling.drift import ks_statistic


def scipy_statistic(reference: pd.Series, current: pd.Series) -> float:
    a, b = reference.dropna().to_numpy(dtype=float), current.dropna().to_numpy(dtype=float)
    if a.size == 0 or b.size == 0:
        return 0.0
    with warnings.catch_warnings():  # its p-value divides by zero for one value a side; the statistic is fine
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(ks_2samp(a, b, method="asymp").statistic)


rng = np.random.default_rng(11)
SAMPLES = {
    "shifted normals": (rng.normal(0, 1, 4000), rng.normal(0.2, 1, 2500)),
    "the same sample": (np.arange(100.0), np.arange(100.0)),
    "ties (integers)": (rng.integers(0, 10, 3000).astype(float), rng.integers(2, 12, 1700).astype(float)),
    "one value each": (np.array([1.0]), np.array([2.0])),
    "one against many": (np.array([5.0]), rng.random(300)),
    "disjoint": (np.arange(10.0), np.arange(10.0) + 100),
    "infinities": (np.array([-np.inf, 0.0, 1.0, np.inf]), np.array([np.inf, np.inf, 2.0])),
    "missing values": (np.array([np.nan, 1.0, 2.0, np.nan, 3.0]), np.array([2.0, np.nan, 4.0])),
    "all missing on one side": (np.array([np.nan, np.nan]), np.array([1.0, 2.0])),
    "empty": (np.array([]), np.array([1.0])),
    "heavy tails": (rng.standard_cauchy(2000), rng.standard_cauchy(2000) * 3),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_statistic_is_scipys(name: str) -> None:
    reference, current = (pd.Series(values) for values in SAMPLES[name])
    assert ks_statistic(reference, current) == scipy_statistic(reference, current)
    assert ks_statistic(current, reference) == scipy_statistic(current, reference)


@pytest.mark.parametrize("seed", range(20))
def test_random_samples_give_scipys_statistic(seed: int) -> None:
    generator = np.random.default_rng(seed)
    sizes = generator.integers(1, 3000, 2)
    reference = pd.Series(generator.normal(0, 1, sizes[0]).round(int(generator.integers(0, 3))))
    current = pd.Series(generator.normal(generator.random(), 1, sizes[1]).round(int(generator.integers(0, 3))))
    assert ks_statistic(reference, current) == scipy_statistic(reference, current)
