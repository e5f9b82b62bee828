"""The features recomputed by both revisions: three workspace commands, independent of each other and of the rest of
the diagnosis, so they are started as soon as the counterfactual's evaluations have begun and run whenever one of the
incident's command lanes comes free (``libs/workspace/command_lanes.py``), up to the incident's ``parallel`` of them
on threads of their own. The evidence is the same whenever they ran: each run writes its own file in the scratch
folder, and the evidence keeps its order.

Within the lanes they run on one thread more than the lanes (``preparing_threads``; all three at two lanes), so the run
beyond the lanes is prepared while the others run; and the approval window's run takes a lane only once both incident
window runs have begun theirs: the recomputation needs those two and is computed while it runs. Left to whichever
preparation ended first, the approval run went first in about half the diagnoses, and then the recomputation and the
drift both waited for the last command: 20-25 ms from it to the diagnosis against 14-15 (8 incidents, 2-core machine).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import copy_context
from functools import partial
from pathlib import Path

from libs.policy.diagnosis import DiagnosisPolicy
from libs.sandbox.command_start import BegunOrDone
from libs.sandbox.folder_removal import scratch_folder
from libs.workspace.command_lanes import AfterBegun, behind, preparing_threads
from services.diagnoser.evidence import Evidence
from services.diagnoser.extractors.feature_drift import feature_drift_evidence
from services.diagnoser.extractors.feature_recomputation import feature_recomputation_evidence
from services.diagnoser.feature_runs import FeatureMatrix, run_features
from services.diagnoser.inputs import IncidentInputs

Run = tuple[str, Path, Path, str]
"""(revision, its tree, a data file, the data's name)."""

INCIDENT_RUNS_WAIT_S = 60.0
"""How long the approval window's run, prepared, waits for the incident window's runs to begin before it takes a lane
whatever they did (each begins or ends long before: this only keeps a run that hangs in preparing from holding it)."""


class FeatureRuns:
    """The three runs of one incident: base and candidate on the incident window, base on the approval window, up to
    ``parallel`` at once (within the incident's lanes, on one thread more than them)."""

    def __init__(self, inputs: IncidentInputs, scratch: Path, parallel: int) -> None:
        self.inputs, self.scratch = inputs, scratch
        self.runs: tuple[Run, ...] = (
            ("base", Path(inputs.base_dir), Path(inputs.incident.eval), "incident"),
            ("candidate", Path(inputs.candidate_dir), Path(inputs.incident.eval), "incident"),
            ("base", Path(inputs.base_dir), Path(inputs.approval.eval), "approval"),
        )
        workers = preparing_threads(len(self.runs), parallel)
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="features")
        self._futures: list[Future[FeatureMatrix]] = []
        self._begun = BegunOrDone()
        incident_runs = [index for index, (*_, data) in enumerate(self.runs) if data == "incident"]
        self._after_incident_runs = AfterBegun(
            "the incident window's runs", self._begun, incident_runs, INCIDENT_RUNS_WAIT_S
        )

    def start(self) -> None:
        """Start the runs, each in a copy of this thread's context (its command's span and log lines keep the
        incident's, and it waits for the incident's lanes). Once only."""
        if not self._futures:
            self._futures = [self.pool.submit(copy_context().run, self._run, index) for index in range(len(self.runs))]

    def _run(self, index: int) -> FeatureMatrix:
        if self.runs[index][3] == "approval":
            with behind(self._after_incident_runs):
                return self._matrix(self.runs[index])
        return self._begun.run(index, partial(self._matrix, self.runs[index]))

    def evidence(self, thresholds: DiagnosisPolicy) -> list[Evidence]:
        """Recomputation (base against candidate on the incident window), then drift (the base revision's features
        on the approval window against the incident window); the runs are started now if they were not."""
        self.start()
        base_incident, candidate_incident = self._futures[0].result(), self._futures[1].result()
        # while the approval window's run may still go: the recomputation needs only the first two
        recomputation = feature_recomputation_evidence(base_incident, candidate_incident, thresholds)
        base_approval = self._futures[2].result()
        return [recomputation, feature_drift_evidence(base_approval, base_incident, thresholds)]

    def queued(self) -> list[Future[FeatureMatrix]]:
        """The runs started, in the evidence's order (none before ``start``)."""
        return list(self._futures)

    def _matrix(self, run: Run) -> FeatureMatrix:
        revision, tree, data, name = run
        return run_features(revision, tree, data, name, self.inputs.workspace, self.scratch)


@contextmanager
def feature_runs(inputs: IncidentInputs, parallel: int) -> Iterator[FeatureRuns]:
    """The incident's feature runs, up to ``parallel`` at once; at exit, the runs not yet begun are dropped when the
    block failed, the others waited for, and their scratch folder removed."""
    with scratch_folder("modelguard-diagnosis-") as scratch:
        runs = FeatureRuns(inputs, scratch, parallel)
        try:
            yield runs
        except BaseException:
            runs.pool.shutdown(wait=True, cancel_futures=True)
            raise
        runs.pool.shutdown(wait=True)
