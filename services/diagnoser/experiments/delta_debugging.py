"""Delta debugging (Zeller's ddmin) over a set of items: the smallest subset whose test still "reproduces",
found by testing parts and complements of the current set, finer and finer. Each round's subsets are handed
to ``test`` together, so they can run in parallel. A test that could not be decided ("unresolved": the
subset did not import, or the budget was spent) never counts as reproducing.

The result is 1-minimal (removing any one item stops it reproducing) when ``proven``; when a test could not
be run the search stops with the smallest reproducing set found so far."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["reproduces", "does_not", "unresolved", "not_run"]
Subset = tuple[int, ...]
BatchTest = Callable[[Sequence[Subset]], Sequence[Verdict]]


@dataclass(frozen=True)
class Reduction:
    minimal: Subset
    tested: tuple[tuple[Subset, Verdict], ...]
    proven: bool
    """Every test the search needed was decided, so ``minimal`` is 1-minimal."""


def ddmin(items: Sequence[int], test: BatchTest) -> Reduction:
    """``items`` as a whole is known to reproduce (it is the candidate's whole change)."""
    current = tuple(items)
    tested: list[tuple[Subset, Verdict]] = []
    proven = True
    granularity = 2
    while len(current) >= 2:
        parts = _split(current, granularity)
        verdicts = _run(test, parts, tested)
        hit = _first(parts, verdicts)
        proven = proven and all(v in ("reproduces", "does_not", "unresolved") for v in verdicts)
        if hit is not None:
            current, granularity = hit, 2
            continue
        if granularity > 2:
            complements = [tuple(item for item in current if item not in part) for part in parts]
            verdicts = _run(test, complements, tested)
            proven = proven and all(v in ("reproduces", "does_not", "unresolved") for v in verdicts)
            hit = _first(complements, verdicts)
            if hit is not None:
                current, granularity = hit, max(granularity - 1, 2)
                continue
        if "not_run" in {verdict for _, verdict in tested}:
            proven = False
            break
        if granularity >= len(current):
            break
        granularity = min(granularity * 2, len(current))
    return Reduction(minimal=current, tested=tuple(tested), proven=proven)


def _split(items: Subset, parts: int) -> list[Subset]:
    size, extra = divmod(len(items), parts)
    out, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        out.append(items[start:end])
        start = end
    return [part for part in out if part]


def _run(test: BatchTest, subsets: list[Subset], tested: list[tuple[Subset, Verdict]]) -> list[Verdict]:
    known = dict(tested)
    fresh = [subset for subset in subsets if subset not in known]
    for subset, verdict in zip(fresh, test(fresh) if fresh else [], strict=True):
        tested.append((subset, verdict))
        known[subset] = verdict
    return [known[subset] for subset in subsets]


def _first(subsets: list[Subset], verdicts: list[Verdict]) -> Subset | None:
    return next((subset for subset, verdict in zip(subsets, verdicts, strict=True) if verdict == "reproduces"), None)
