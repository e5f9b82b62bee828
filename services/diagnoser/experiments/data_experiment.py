"""Which column, which fault: under the base code, undo one kind of fault in the incident window (both its
files), or leave the rows that carry it out of the scoring, or bring the rows to the approval window's label
mix, and re-evaluate. The share of the data's loss each intervention wins back says which fault carries the
drop; the columns of the best one are narrowed down by delta debugging.

Order of the runs: first every specific repair (schema, type, category, quality) and the label resample
together, in parallel; the quantile mapping of drifted columns only when none of those recovers; then the
columns. Leaving rows out and reweighting cost no run when ModelGuard is the referee (it rescores the
predictions it already has)."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from libs.policy.diagnosis import DiagnosisPolicy
from libs.referee.metrics import METRICS, MetricUndefined, Task
from libs.workspace.scored_rows import ScoredRows
from services.diagnoser.experiments.column_faults import MIN_DISTINCT_FOR_DRIFT, ColumnFault, find_faults
from services.diagnoser.experiments.column_repairs import fault_rows, repaired_frame
from services.diagnoser.experiments.delta_debugging import Subset, Verdict, ddmin
from services.diagnoser.experiments.label_mix import grouped_like, label_distance, label_groups, mix_weights, resampled
from services.diagnoser.experiments.loss import loss, share
from services.diagnoser.inputs import CounterfactualMetrics, DataWindow, GateSpec
from services.diagnoser.profiling.drift import ks_statistic
from services.diagnoser.profiling.frames import read_window_files, window_files
from services.diagnoser.profiling.numbers import plain_numbers
from services.diagnoser.trials.runner import TrialRunner
from services.diagnoser.trials.trial import Trial

InterventionKind = Literal["schema", "type", "category", "quality", "drift", "label"]
How = Literal["repair", "leave_out", "resample"]
SPECIFIC: tuple[InterventionKind, ...] = ("schema", "type", "category", "quality")
SPECIFICITY: tuple[InterventionKind, ...] = ("schema", "type", "category", "quality", "label", "drift")
MIN_ROWS_KEPT = 0.1
MIN_ROWS_KEPT_COUNT = 100
MIN_GROUP_ROWS = 30


@dataclass(frozen=True)
class Intervention:
    kind: InterventionKind
    how: How
    columns: tuple[str, ...]
    metric: float | None
    recovered: float | None
    """The share of the data's loss (base code, incident against approval) it wins back."""
    detail: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "how": self.how,
            "columns": list(self.columns),
            "metric": self.metric,
            "recovered": self.recovered,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class DataLocalisation:
    faults: tuple[ColumnFault, ...]
    interventions: tuple[Intervention, ...]
    data_loss: float
    label_moved: float | None
    culprits: tuple[str, ...] = ()
    residual_drift: tuple[str, float] | None = None
    """After resampling to the approval label mix: the numeric column still most unlike the approval window,
    and its KS. A prior shift leaves P(inputs | label) as it was, so this is small; a new segment is not."""
    """The columns of the best intervention that carry its recovery (delta debugging)."""

    def recovered(self, kind: InterventionKind) -> float | None:
        values = [i.recovered for i in self.interventions if i.kind == kind and i.recovered is not None]
        return max(values) if values else None

    def attempted(self, kind: InterventionKind) -> bool:
        return any(i.kind == kind for i in self.interventions)

    def best(self) -> Intervention | None:
        """The intervention that wins back the most; a more specific one wins a near tie (within 0.05)."""
        measured = [i for i in self.interventions if i.recovered is not None]
        if not measured:
            return None
        top = max(i.recovered or 0.0 for i in measured)
        close = [i for i in measured if (i.recovered or 0.0) >= top - 0.05]
        return min(close, key=lambda i: (SPECIFICITY.index(i.kind), -(i.recovered or 0.0)))


@dataclass(frozen=True)
class _Frames:
    approval_train: pd.DataFrame
    approval_eval: pd.DataFrame
    incident_train: pd.DataFrame
    incident_eval: pd.DataFrame

    @property
    def approval(self) -> pd.DataFrame:
        return pd.concat([self.approval_train, self.approval_eval], ignore_index=True)

    @property
    def incident(self) -> pd.DataFrame:
        return pd.concat([self.incident_train, self.incident_eval], ignore_index=True)


def localise_data_fault(
    runner: TrialRunner,
    base: Path,
    approval: DataWindow,
    incident: DataWindow,
    metrics: CounterfactualMetrics,
    gate: GateSpec,
    label: str,
    thresholds: DiagnosisPolicy,
    scratch: Path,
    logged_renames: dict[str, str] | None = None,
    declared: Mapping[str, object] | None = None,
) -> DataLocalisation | None:
    """None when the base code loses nothing to the data (or the cells are missing). ``logged_renames`` are the
    renames DataHub recorded (old -> new): a rename the data alone cannot pair is tried too. ``declared``: the
    workspace's null fills and categorical defaults, which the repairs use where given. ``UnreadableWindows``
    (before any trial runs) when a window's CSV cannot be read as a table."""
    if metrics.base_on_approval is None or metrics.base_on_incident is None:
        return None
    data_loss = loss(gate, metrics.base_on_incident) - loss(gate, metrics.base_on_approval)
    if data_loss <= 0:
        return None
    frames = _Frames(*read_window_files(window_files(approval, incident), _raw))
    faults = find_faults(frames.approval, frames.incident, label, thresholds, logged_renames or {})
    scored = metrics.scored.get("base_on_incident")
    with tempfile.TemporaryDirectory(dir=scratch, prefix="data-") as folder:
        lab = _Lab(runner, base, frames, gate, label, thresholds, Path(folder), scored, metrics, data_loss)
        lab.declared = dict(declared or {})
        interventions = lab.first_round(faults)
        specific_best = max((i.recovered or 0.0 for i in interventions if i.kind != "drift"), default=0.0)
        drifted = [f for f in faults if f.kind == "drift"]
        if drifted and specific_best < thresholds.recovery_share:
            interventions.append(lab.repair("drift", drifted))
        localisation = DataLocalisation(tuple(faults), tuple(interventions), round(data_loss, 6), lab.label_moved)
        best = localisation.best()
        culprits = lab.culprits(best, faults) if best is not None else ()
    return DataLocalisation(
        tuple(faults), tuple(lab.all), round(data_loss, 6), lab.label_moved, culprits, lab.residual_drift
    )


def _raw(path: Path) -> pd.DataFrame:
    """The window's cells as text, decoded as the profile decodes them (``read_text_frame``: bytes that are not UTF-8
    read as U+FFFD), so a fault the profile names is found in the frames the trials change."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, encoding_errors="replace")


class _Lab:
    """Runs the interventions of one incident; ``all`` keeps every one, the column narrowing's included."""

    def __init__(
        self,
        runner: TrialRunner,
        base: Path,
        frames: _Frames,
        gate: GateSpec,
        label: str,
        thresholds: DiagnosisPolicy,
        folder: Path,
        scored: ScoredRows | None,
        metrics: CounterfactualMetrics,
        data_loss: float,
    ) -> None:
        self.runner, self.base, self.frames, self.gate, self.label = runner, base, frames, gate, label
        self.thresholds, self.folder, self.scored, self.data_loss = thresholds, folder, scored, data_loss
        self.base_metric = float(metrics.base_on_incident or 0.0)
        self.task = _task(gate, frames, label, thresholds)
        self.all: list[Intervention] = []
        self.label_moved: float | None = None
        self.residual_drift: tuple[str, float] | None = None
        self.declared: dict[str, object] = {}
        self._numbers = itertools.count()

    def first_round(self, faults: Sequence[ColumnFault]) -> list[Intervention]:
        pending: list[tuple[InterventionKind, How, tuple[str, ...], Trial]] = []
        for kind in SPECIFIC:
            chosen = [f for f in faults if f.kind == kind and (kind != "schema" or f.renamed_to)]
            if chosen:
                pending.append((kind, "repair", _columns(chosen), self._repair_trial(kind, chosen)))
        resample = self._label_trial()
        if resample is not None:
            pending.append(("label", "resample", (self.label,), resample))
        outcomes = self.runner.run([trial for *_, trial in pending])
        found = [
            self._record(kind, how, columns, outcome.metric, outcome.failure or "")
            for (kind, how, columns, _), outcome in zip(pending, outcomes, strict=True)
        ]
        for kind in ("category", "quality", "drift"):
            chosen = [f for f in faults if f.kind == kind]
            if chosen:
                left_out = self.leave_out(kind, chosen)
                if left_out is not None:
                    found.append(left_out)
        return found

    def repair(self, kind: InterventionKind, faults: Sequence[ColumnFault]) -> Intervention:
        outcome = self.runner.run_one(self._repair_trial(kind, faults))
        return self._record(kind, "repair", _columns(faults), outcome.metric, outcome.failure or "")

    def leave_out(self, kind: InterventionKind, faults: Sequence[ColumnFault]) -> Intervention | None:
        """Score without the rows that carry ``faults``: free with the referee's predictions, else one run."""
        rows = fault_rows(self.frames.incident_eval, faults)
        if rows is None or not rows.any():
            return None
        kept = ~rows.to_numpy()
        if kept.mean() < MIN_ROWS_KEPT or kept.sum() < MIN_ROWS_KEPT_COUNT:
            return None
        detail = f"{int(rows.sum())} of {len(rows)} evaluation rows left out"
        if self.scored is not None:
            try:
                metric = self.scored.gate_metric(self.gate, weights=kept.astype(float))
            except (MetricUndefined, ValueError) as error:
                return self._record(kind, "leave_out", _columns(faults), None, f"{detail}: {error}")
            return self._record(kind, "leave_out", _columns(faults), metric, detail)
        trial = self._trial(
            f"base without the {kind} rows", self.frames.incident_train, self.frames.incident_eval[kept]
        )
        outcome = self.runner.run_one(trial)
        return self._record(kind, "leave_out", _columns(faults), outcome.metric, outcome.failure or detail)

    def culprits(self, best: Intervention, faults: Sequence[ColumnFault]) -> tuple[str, ...]:
        """The columns of ``best`` that carry its recovery: delta debugging over its columns."""
        if len(best.columns) <= 1 or best.kind == "label" or not best.recovered:
            return best.columns
        chosen = [f for f in faults if f.kind == best.kind and f.column in best.columns]
        target = self.thresholds.carry_share * best.recovered

        def test(subsets: Sequence[Subset]) -> list[Verdict]:
            picked = [[chosen[index] for index in subset] for subset in subsets]
            if best.how == "leave_out":
                results = [self.leave_out(best.kind, part) for part in picked]
            else:
                outcomes = self.runner.run([self._repair_trial(best.kind, part) for part in picked])
                results = [
                    self._record(best.kind, "repair", _columns(part), o.metric, o.failure or "")
                    for part, o in zip(picked, outcomes, strict=True)
                ]
            return [_verdict(result, target) for result in results]

        reduction = ddmin(list(range(len(chosen))), test)
        return tuple(chosen[index].column for index in reduction.minimal)

    def _repair_trial(self, kind: InterventionKind, faults: Sequence[ColumnFault]) -> Trial:
        train, scored = (
            repaired_frame(frame, faults, self.frames.approval, self.frames.incident, self.thresholds, self.declared)
            for frame in (self.frames.incident_train, self.frames.incident_eval)
        )
        return self._trial(f"base with {kind} repaired in {', '.join(_columns(faults))}", train, scored)

    def _label_trial(self) -> Trial | None:
        """Both incident files resampled to the approval window's label mix, when the label moved at all."""
        frames = self.frames
        if self.label not in frames.incident_eval.columns or self.label not in frames.approval_eval.columns:
            return None
        parts = []
        moved = 0.0
        for reference, current in (
            (frames.approval_train, frames.incident_train),
            (frames.approval_eval, frames.incident_eval),
        ):
            groups = label_groups(reference[self.label], current[self.label], self.task)
            if groups is None:
                return None
            ref, cur = groups
            moved = max(moved, label_distance(ref, cur, self.task))
            parts.append(resampled(current, mix_weights(ref, cur, self.task)))
        self.label_moved = round(moved, 4)
        if moved < self.thresholds.label_shift:
            return None
        pooled = label_groups(frames.approval[self.label], frames.incident[self.label], self.task)
        if pooled is not None:
            groups = grouped_like(pooled[0], pooled[1], self.task)
            self.residual_drift = _residual_drift(frames.approval, frames.incident, groups, self.label)
        return self._trial("base on the incident rows resampled to the approval label mix", parts[0], parts[1])

    def _trial(self, name: str, train: pd.DataFrame, scored: pd.DataFrame) -> Trial:
        folder = self.folder / f"window-{next(self._numbers)}"
        folder.mkdir()
        train.to_csv(folder / "train.csv", index=False)
        scored.to_csv(folder / "eval.csv", index=False)
        return Trial(name, self.base, DataWindow(name="incident", train=folder / "train.csv", eval=folder / "eval.csv"))

    def _record(
        self, kind: InterventionKind, how: How, columns: tuple[str, ...], metric: float | None, detail: str
    ) -> Intervention:
        recovered = None
        if metric is not None:
            recovered = share(loss(self.gate, self.base_metric) - loss(self.gate, metric), self.data_loss)
        intervention = Intervention(kind, how, columns, metric, recovered, detail)
        self.all.append(intervention)
        return intervention


def _residual_drift(
    approval: pd.DataFrame, incident: pd.DataFrame, groups: tuple[np.ndarray, np.ndarray], label: str
) -> tuple[str, float] | None:
    """P(inputs | label) compared between the windows: per numeric input column, the KS statistic within each
    label group (a class, or a decile of the approval labels), averaged with the approval's group shares; the
    column that moved most. A prior shift leaves this small; a new segment whose labels moved with it does not."""
    approval_groups, incident_groups = groups
    worst: tuple[str, float] | None = None
    for name in approval.columns:
        if name == label or name not in incident.columns:
            continue
        before, after = plain_numbers(approval[name]), plain_numbers(incident[name])
        if before.dropna().nunique() < MIN_DISTINCT_FOR_DRIFT:
            continue
        total, weight = 0.0, 0.0
        for group in np.unique(approval_groups):
            a, b = before[approval_groups == group].dropna(), after[incident_groups == group].dropna()
            if len(a) < MIN_GROUP_ROWS or len(b) < MIN_GROUP_ROWS:
                continue
            share = float(np.mean(approval_groups == group))
            total, weight = total + share * ks_statistic(a, b), weight + share
        if weight:
            statistic = round(total / weight, 4)
            if worst is None or statistic > worst[1]:
                worst = (str(name), statistic)
    return worst


def _task(gate: GateSpec, frames: _Frames, label: str, thresholds: DiagnosisPolicy) -> Task:
    """The referee's task for its metrics; for a self-reported metric, read off the label column."""
    if gate.metric in METRICS:
        return METRICS[gate.metric].task
    labels = frames.approval_eval.get(label)
    if labels is None:
        return "classification"
    return "classification" if labels.nunique() <= thresholds.max_categories else "regression"


def _verdict(result: Intervention | None, target: float) -> Verdict:
    if result is None or result.recovered is None:
        return "unresolved"
    return "reproduces" if result.recovered >= target else "does_not"


def _columns(faults: Sequence[ColumnFault]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(fault.column for fault in faults))
