"""Collect every piece of evidence for one incident from ``IncidentInputs``: the counterfactual runs, the
code and configuration change, the source data of both windows, the features recomputed by both revisions,
and what DataHub logged. The order of the list is stable."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from libs.policy.diagnosis import DiagnosisPolicy
from libs.sandbox.command_start import BegunOrDone
from libs.sandbox.folder_removal import scratch_folder
from libs.workspace.command_lanes import sharing_lanes
from libs.workspace.generated_code import GeneratedFile, generated_files
from services.diagnoser.code_diff import diff_trees
from services.diagnoser.evidence import Evidence
from services.diagnoser.experiments.change_experiment import ChangeIsolation, isolate_change
from services.diagnoser.experiments.data_experiment import DataLocalisation, localise_data_fault
from services.diagnoser.extractors.assertions import assertions_evidence
from services.diagnoser.extractors.change_isolation import change_isolation_evidence, change_isolation_unavailable
from services.diagnoser.extractors.change_timing import change_timing_evidence, regression_time_ms
from services.diagnoser.extractors.code_change import code_change_evidence
from services.diagnoser.extractors.config_change import config_change_evidence
from services.diagnoser.extractors.counterfactual import counterfactual_evidence
from services.diagnoser.extractors.data_interventions import data_interventions_evidence, data_interventions_unavailable
from services.diagnoser.extractors.dataset_profiles import dataset_profiles_evidence
from services.diagnoser.extractors.label_shift import label_shift_evidence
from services.diagnoser.extractors.lineage_relevance import lineage_relevance_evidence
from services.diagnoser.extractors.read_columns import read_columns_evidence
from services.diagnoser.extractors.schema_history import schema_history_evidence
from services.diagnoser.extractors.source_categories import source_categories_evidence
from services.diagnoser.extractors.source_data_unavailable import source_data_unavailable
from services.diagnoser.extractors.source_drift import source_drift_evidence
from services.diagnoser.extractors.source_quality import source_quality_evidence
from services.diagnoser.extractors.source_schema import source_schema_evidence
from services.diagnoser.extractors.source_types import source_types_evidence
from services.diagnoser.feature_evidence import feature_runs
from services.diagnoser.feature_modules import feature_files
from services.diagnoser.inputs import CounterfactualMetrics, IncidentInputs
from services.diagnoser.profiling.frames import UnreadableWindows, readable_columns, window_files
from services.diagnoser.profiling.windows import all_columns, profile_windows, relevant_columns
from services.diagnoser.trials.counterfactual_cells import run_counterfactual_cells

COUNTERFACTUAL = "counterfactual"
BEGIN_WAIT_S = 5.0
"""Longest wait for the counterfactual's first command to begin before the data work and the feature runs start anyway
(a command whose preparation is slow, as building a workspace environment is, does not hold the diagnosis back)."""


@dataclass(frozen=True)
class IncidentEvidence:
    evidence: tuple[Evidence, ...]
    feature_files: tuple[str, ...]
    metrics: CounterfactualMetrics
    isolation: ChangeIsolation | None = None
    localisation: DataLocalisation | None = None
    generated: dict[str, GeneratedFile] = field(default_factory=dict)
    """Changed files that are generated code (header markers, ``.gitattributes``, the policy's globs)."""
    base_dir: Path = Path()
    candidate_dir: Path = Path()

    def first(self, kind: str) -> Evidence | None:
        return next((item for item in self.evidence if item.kind == kind), None)


def collect_incident_evidence(
    inputs: IncidentInputs, thresholds: DiagnosisPolicy, generated_globs: tuple[str, ...] = ()
) -> IncidentEvidence:
    """``generated_globs``: the central policy's ``repair.generated_paths``."""
    base, candidate, workspace = Path(inputs.base_dir), Path(inputs.candidate_dir), inputs.workspace
    parallel = inputs.trials.parallel if inputs.trials is not None else 1
    unreadable: UnreadableWindows | None = None
    # every command of the incident takes one of `parallel` lanes, so those that do not depend on each other can be
    # started early: a lane that comes free goes to the next at once
    with sharing_lanes(parallel), feature_runs(inputs, parallel) as features:
        # the counterfactual's four runs are the workspace's commands: the diff and the data are read while they run
        # (in a copy of this thread's context, so their spans and log lines keep the incident's)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="counterfactual") as runs:
            begun = BegunOrDone()
            measuring = runs.submit(
                copy_context().run, begun.run, COUNTERFACTUAL, partial(counterfactual_metrics, inputs)
            )
            # the work on the diff and the data holds the interpreter's lock for long stretches: begun beside the
            # commands' preparation, the data work made that take 40-100 ms instead of about 10, and the diff (about
            # 16 ms) kept the evaluations' cache keys from being computed for as long; and the feature runs start
            # once the counterfactual's evaluations have their lanes, which they need first
            begun.wait({COUNTERFACTUAL}, BEGIN_WAIT_S)
            features.start()
            diff = diff_trees(base, candidate)
            changed = diff.changed_paths()
            on_feature_path = feature_files(base, workspace, changed) | feature_files(candidate, workspace, changed)
            generated = {
                **generated_files(base, changed, generated_globs),
                **generated_files(candidate, changed, generated_globs),
            }
            data = _data_evidence(inputs, thresholds)
            metrics = measuring.result()
        counterfactual = counterfactual_evidence(metrics, inputs.gate)
        location = drop_location(counterfactual, thresholds)
        with scratch_folder("modelguard-experiments-") as scratch:
            isolation = _isolate(inputs, metrics, location, on_feature_path, thresholds, scratch)
            try:
                localisation = _localise(inputs, metrics, location, thresholds, scratch, logged_renames(inputs))
            except UnreadableWindows as error:  # read before any trial runs
                localisation, unreadable = None, error
        harmless = frozenset(isolation.dropped_paths) if isolation is not None else frozenset()
        evidence = [
            counterfactual,
            change_isolation_evidence(isolation, on_feature_path, generated)
            if isolation is not None
            else change_isolation_unavailable(_why_not(inputs, location, "code")),
            code_change_evidence(diff, base, candidate, on_feature_path, harmless),
            config_change_evidence(diff, base, candidate, on_feature_path, inputs.changes, harmless),
            data_interventions_evidence(localisation, thresholds.ks_drift)
            if localisation is not None
            else data_interventions_unavailable(str(unreadable) if unreadable else _why_not(inputs, location, "data")),
            *data,
            *features.evidence(thresholds),
        ]
    evidence.extend(_metadata_evidence(inputs, evidence, thresholds))
    return IncidentEvidence(
        evidence=tuple(evidence),
        feature_files=tuple(sorted(on_feature_path)),
        metrics=metrics,
        isolation=isolation,
        localisation=localisation,
        generated=generated,
        base_dir=base,
        candidate_dir=candidate,
    )


def drop_location(counterfactual: Evidence, thresholds: DiagnosisPolicy) -> str:
    """``code`` or ``data`` when that side carries the policy's dominant share of the drop, else ``mixed``
    (``none`` without a regression or a complete counterfactual)."""
    values = counterfactual.values
    if not values.get("available") or not values.get("regressed"):
        return "none"
    if values["code_attribution"] >= thresholds.dominant_share:
        return "code"
    if values["data_attribution"] >= thresholds.dominant_share:
        return "data"
    return "mixed"


def _isolate(
    inputs: IncidentInputs,
    metrics: CounterfactualMetrics,
    location: str,
    feature_path: frozenset[str],
    thresholds: DiagnosisPolicy,
    scratch: Path,
) -> ChangeIsolation | None:
    if location != "code" or inputs.trials is None:
        return None
    candidate = Path(inputs.candidate_dir)
    python_files = sorted(path.relative_to(candidate).as_posix() for path in candidate.rglob("*.py"))
    return isolate_change(
        inputs.trials,
        Path(inputs.base_dir),
        Path(inputs.candidate_dir),
        inputs.incident,
        metrics,
        inputs.gate,
        thresholds.carry_share,
        scratch,
        order=[*sorted(feature_path), *python_files],
    )


def logged_renames(inputs: IncidentInputs) -> dict[str, str]:
    """Renames DataHub logged for the model's upstream datasets before the regression: old name -> new name."""
    context = inputs.context
    history = schema_history_evidence(
        inputs.changes, [], inputs.dataset_urn, context, regression_time_ms(context.fetched_at if context else None)
    )
    return {item["old"]: item["new"] for item in history.values["renamed"]}


def _localise(
    inputs: IncidentInputs,
    metrics: CounterfactualMetrics,
    location: str,
    thresholds: DiagnosisPolicy,
    scratch: Path,
    renames: dict[str, str],
) -> DataLocalisation | None:
    if location != "data" or inputs.trials is None:
        return None
    return localise_data_fault(
        inputs.trials,
        Path(inputs.base_dir),
        inputs.approval,
        inputs.incident,
        metrics,
        inputs.gate,
        inputs.workspace.label,
        thresholds,
        scratch,
        renames,
        {**inputs.workspace.categorical_defaults, **inputs.workspace.null_fills},
    )


def _why_not(inputs: IncidentInputs, location: str, side: str) -> str:
    if inputs.trials is None:
        return "the four counterfactual metrics were given, so no further evaluation can run"
    if location == "none":
        return "no regression on complete counterfactual runs"
    return (
        f"the drop does not follow the {side} (it follows the {location})"
        if location != "mixed"
        else ("the drop follows both the code and the data")
    )


def counterfactual_metrics(inputs: IncidentInputs) -> CounterfactualMetrics:
    """The four pairs as given, or run now with the inputs' trial runner."""
    if inputs.metrics is not None:
        return inputs.metrics
    if inputs.trials is None:
        raise ValueError("IncidentInputs needs the four counterfactual metrics or a trial runner to measure them")
    return run_counterfactual_cells(
        inputs.trials, Path(inputs.base_dir), Path(inputs.candidate_dir), inputs.approval, inputs.incident
    )


def _data_evidence(inputs: IncidentInputs, thresholds: DiagnosisPolicy) -> list[Evidence]:
    """The columns the code reads, then what the windows' cells show; when a window's CSV cannot be read as a
    table, the columns are looked for among the header rows that can be read and the rest is unavailable."""
    label, trees = inputs.workspace.label, (inputs.base_dir, inputs.candidate_dir)
    try:
        pairs = profile_windows(
            inputs.approval, inputs.incident, thresholds.numeric_parse_rate, thresholds.max_categories
        )
    except UnreadableWindows as unreadable:
        headers = readable_columns(window_files(inputs.approval, inputs.incident))
        return [read_columns_evidence(trees, headers, label), *source_data_unavailable(unreadable, label)]
    read = read_columns_evidence(trees, all_columns(pairs), label)
    read_names = list(read.values["columns"])
    columns = relevant_columns(pairs, read_names, label)
    schema = source_schema_evidence(pairs, columns, thresholds)
    present = [name for name in columns if name not in schema.values["read_columns_gone"]]
    types = source_types_evidence(pairs, present)
    typed = [name for name in present if name not in types.values["retyped"]]
    categories = source_categories_evidence(pairs, typed, thresholds)
    quality = source_quality_evidence(pairs, typed, thresholds)
    faulted = set(categories.values["columns_over_threshold"]) | set(quality.values["faulty_columns"])
    drift = source_drift_evidence(pairs, [name for name in typed if name not in faulted], thresholds)
    return [read, schema, types, categories, quality, drift, label_shift_evidence(pairs, label, thresholds)]


def _metadata_evidence(inputs: IncidentInputs, evidence: list[Evidence], thresholds: DiagnosisPolicy) -> list[Evidence]:
    context = inputs.context
    regression_ms = regression_time_ms(context.fetched_at if context is not None else None)
    read = next(item for item in evidence if item.kind == "code.read_columns").values["columns"]
    found = [
        schema_history_evidence(inputs.changes, list(read), inputs.dataset_urn, context, regression_ms),
        assertions_evidence(inputs.changes, context, inputs.dataset_urn, regression_ms),
        dataset_profiles_evidence(inputs.changes, inputs.dataset_urn, context, regression_ms, thresholds),
    ]
    if inputs.changes:
        found.append(change_timing_evidence(inputs.changes, regression_ms))
        found.append(
            lineage_relevance_evidence((record.entity_urn for record in inputs.changes), inputs.dataset_urn, context)
        )
    return found
