"""The features recomputed by both revisions (three workspace commands), run beside the diagnoser's own work on
the data: the commands are independent of each other and of that work, so up to the trial runner's ``parallel``
of them run at once while this thread computes, once the first have begun (with ``parallel`` 1, one after another,
after it). The evidence is the same either way: each run writes its own file in the scratch folder, and the list
keeps its order."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from functools import partial
from pathlib import Path
from typing import TypeVar

from libs.policy.diagnosis import DiagnosisPolicy
from libs.sandbox.command_start import BegunOrDone
from services.diagnoser.evidence import Evidence
from services.diagnoser.extractors.feature_drift import feature_drift_evidence
from services.diagnoser.extractors.feature_recomputation import feature_recomputation_evidence
from services.diagnoser.feature_runs import FeatureMatrix, run_features
from services.diagnoser.inputs import IncidentInputs

T = TypeVar("T")
BEGIN_WAIT_S = 5.0
"""Longest wait for the first commands to begin before this thread's own work starts anyway (a command whose
preparation is slow, as building a workspace environment is, does not hold the diagnosis back for long)."""


def feature_evidence_beside(
    inputs: IncidentInputs, thresholds: DiagnosisPolicy, meanwhile: Callable[[], T]
) -> tuple[T, list[Evidence]]:
    """``meanwhile()``'s result and the feature evidence (recomputation: base against candidate on the incident
    window; drift: the base revision's features on the approval window against the incident window)."""
    parallel = inputs.trials.parallel if inputs.trials is not None else 1
    runs: tuple[tuple[str, Path, Path, str], ...] = (
        ("base", Path(inputs.base_dir), Path(inputs.incident.eval), "incident"),
        ("candidate", Path(inputs.candidate_dir), Path(inputs.incident.eval), "incident"),
        ("base", Path(inputs.base_dir), Path(inputs.approval.eval), "approval"),
    )
    with tempfile.TemporaryDirectory(prefix="modelguard-diagnosis-") as scratch_dir:
        scratch = Path(scratch_dir)

        def matrix(run: tuple[str, Path, Path, str]) -> FeatureMatrix:
            revision, tree, data, name = run
            return run_features(revision, tree, data, name, inputs.workspace, scratch)

        if parallel < 2:
            found = meanwhile()
            base_incident, candidate_incident = matrix(runs[0]), matrix(runs[1])
            recomputation = feature_recomputation_evidence(base_incident, candidate_incident, thresholds)
            base_approval = matrix(runs[2])
        else:
            # each run in a copy of this thread's context: its command's span and log lines keep the incident's
            workers = min(parallel, len(runs))
            begun = BegunOrDone()
            with ThreadPoolExecutor(max_workers=workers) as pool:
                futures = [
                    pool.submit(copy_context().run, begun.run, index, partial(matrix, run))
                    for index, run in enumerate(runs)
                ]
                # this thread's own work holds the interpreter's lock for long stretches: begun beside the commands'
                # preparation, it made that take 40-100 ms instead of about 10; once they have begun, it is free
                begun.wait(set(range(workers)), BEGIN_WAIT_S)
                found = meanwhile()
                base_incident, candidate_incident = futures[0].result(), futures[1].result()
                # while the approval window's run may still go: the recomputation needs only the first two
                recomputation = feature_recomputation_evidence(base_incident, candidate_incident, thresholds)
                base_approval = futures[2].result()
    return found, [recomputation, feature_drift_evidence(base_approval, base_incident, thresholds)]
