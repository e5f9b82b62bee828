"""Which change carries the drop: delta debugging over the candidate's change on the base tree, evaluated on the
incident window. First over files, then over the hunks of the files that remain. A subset "reproduces" when it
carries at least ``carry_share`` of what the whole candidate loses against the base on that window; a subset
that does not run (it does not import, say) is unresolved, never evidence. Units that carry none of the drop
drop out by measurement: a version bump, a stamp file, a docstring."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from services.diagnoser.experiments.change_units import ChangeUnit, change_units
from services.diagnoser.experiments.delta_debugging import Reduction, Subset, Verdict, ddmin
from services.diagnoser.experiments.loss import loss, share
from services.diagnoser.experiments.tree_assembly import assemble_tree
from services.diagnoser.inputs import CounterfactualMetrics, DataWindow, GateSpec
from services.diagnoser.trials.runner import TrialRunner
from services.diagnoser.trials.trial import Trial, TrialOutcome


@dataclass(frozen=True)
class SubsetResult:
    units: Subset
    verdict: Verdict
    metric: float | None
    carried: float | None
    """The share of the candidate's loss (against the base, on the incident window) this subset carries."""
    failure: str | None = None


@dataclass(frozen=True)
class ChangeIsolation:
    units: tuple[ChangeUnit, ...]
    minimal: tuple[int, ...]
    carried: float | None
    """The minimal set's share of the candidate's loss (1.0 when the candidate is one unit)."""
    proven: bool
    subsets: tuple[SubsetResult, ...] = field(default=())
    levels: tuple[str, ...] = ()

    @property
    def minimal_units(self) -> tuple[ChangeUnit, ...]:
        chosen = set(self.minimal)
        return tuple(unit for unit in self.units if unit.id in chosen)

    @property
    def minimal_paths(self) -> tuple[str, ...]:
        return tuple(sorted({unit.path for unit in self.minimal_units}))

    @property
    def dropped_paths(self) -> tuple[str, ...]:
        kept = set(self.minimal_paths)
        return tuple(sorted({unit.path for unit in self.units} - kept))


def isolate_change(
    runner: TrialRunner,
    base: Path,
    candidate: Path,
    incident: DataWindow,
    metrics: CounterfactualMetrics,
    gate: GateSpec,
    carry_share: float,
    scratch: Path,
    order: Sequence[str] = (),
) -> ChangeIsolation | None:
    """None when there is no loss to carry (the cells are missing, or the candidate is not worse on the
    incident window). ``order`` lists paths to try first (it changes how many runs are needed, never the
    result)."""
    if metrics.base_on_incident is None or metrics.candidate_on_incident is None:
        return None
    code_loss = loss(gate, metrics.candidate_on_incident) - loss(gate, metrics.base_on_incident)
    units = tuple(change_units(base, candidate))
    if code_loss <= 0 or not units:
        return None
    rank = {path: index for index, path in enumerate(order)}
    ordered = sorted(units, key=lambda unit: (rank.get(unit.path, len(rank)), unit.path, unit.id))
    results: dict[Subset, SubsetResult] = {}
    numbers = itertools.count()
    with tempfile.TemporaryDirectory(dir=scratch, prefix="changes-") as folder:

        def test(subsets: Sequence[Subset]) -> list[Verdict]:
            trials = []
            for subset in subsets:
                tree = Path(folder) / f"subset-{next(numbers)}"
                assemble_tree(base, candidate, [u for u in units if u.id in set(subset)], tree)
                trials.append(
                    Trial(f"changes {','.join(map(str, sorted(subset)))} on the incident window", tree, incident)
                )
            outcomes = runner.run(trials)
            verdicts = []
            for subset, outcome in zip(subsets, outcomes, strict=True):
                result = _judge(subset, outcome, gate, metrics.base_on_incident or 0.0, code_loss, carry_share)
                results[tuple(sorted(subset))] = result
                verdicts.append(result.verdict)
            return verdicts

        files = _by_file(ordered)
        levels = []
        if len(files) > 1:
            levels.append("files")
            reduction = ddmin(list(range(len(files))), lambda subsets: test([_expand(files, s) for s in subsets]))
            kept_units = [unit for index in reduction.minimal for unit in files[index]]
            proven = reduction.proven
        else:
            kept_units, proven = list(ordered), True
        if len(kept_units) > 1:
            levels.append("hunks")
            ids = [unit.id for unit in kept_units]
            hunk_reduction: Reduction = ddmin(ids, test)
            minimal, proven = tuple(sorted(hunk_reduction.minimal)), proven and hunk_reduction.proven
        else:
            minimal = tuple(unit.id for unit in kept_units)
    whole = tuple(sorted(unit.id for unit in units))
    carried = 1.0 if minimal == whole else (results[minimal].carried if minimal in results else None)
    return ChangeIsolation(
        units=units,
        minimal=minimal,
        carried=carried,
        proven=proven,
        subsets=tuple(results.values()),
        levels=tuple(levels),
    )


def _by_file(units: Sequence[ChangeUnit]) -> list[list[ChangeUnit]]:
    groups: dict[str, list[ChangeUnit]] = {}
    for unit in units:
        groups.setdefault(unit.path, []).append(unit)
    return list(groups.values())


def _expand(files: list[list[ChangeUnit]], subset: Subset) -> Subset:
    return tuple(unit.id for index in subset for unit in files[index])


def _judge(
    subset: Subset, outcome: TrialOutcome, gate: GateSpec, base_metric: float, code_loss: float, carry_share: float
) -> SubsetResult:
    units = tuple(sorted(subset))
    if outcome.metric is None:
        verdict: Verdict = "not_run" if outcome.failure and outcome.failure.startswith("not run") else "unresolved"
        return SubsetResult(units, verdict, None, None, outcome.failure)
    carried = share(loss(gate, outcome.metric) - loss(gate, base_metric), code_loss)
    reproduces = carried is not None and carried >= carry_share
    return SubsetResult(units, "reproduces" if reproduces else "does_not", outcome.metric, carried)
