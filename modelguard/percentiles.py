"""The benchmarks' percentile: the nearest rank, with no interpolation (a figure printed is one that was measured)."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The value at quantile ``q`` (0-1) of ``values``, by nearest rank; NaN for none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]
