"""The incident's three feature runs, started early and read later: the same runs in the evidence's order, each in the
context of the thread that started them, up to the trial runner's `parallel` at once; the recomputation does not
wait for the approval window's run; a block that fails drops the runs not yet begun."""

from __future__ import annotations

import threading
from contextvars import ContextVar
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import services.diagnoser.feature_evidence as feature_evidence
from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.feature_runs import FeatureMatrix
from tests.support.waiting import wait_until

INCIDENT: ContextVar[str] = ContextVar("incident", default="none")
EXPECTED_RUNS = [("base", "incident"), ("candidate", "incident"), ("base", "approval")]


def _inputs(parallel: int | None) -> Any:
    return SimpleNamespace(
        trials=None if parallel is None else SimpleNamespace(parallel=parallel),
        base_dir="/trees/base",
        candidate_dir="/trees/candidate",
        incident=SimpleNamespace(eval="/data/incident/eval.csv"),
        approval=SimpleNamespace(eval="/data/approval/eval.csv"),
        workspace=SimpleNamespace(),
    )


class Recorder:
    def __init__(self, first_two_meet: bool = False) -> None:
        self.lock = threading.Lock()
        self.meeting = threading.Barrier(2) if first_two_meet else None
        self.running = self.most = 0
        self.runs: list[tuple[str, str, str]] = []
        self.order: list[str] = []
        self.matrices: list[FeatureMatrix] = []

    def run_features(self, revision: str, tree: Path, data: Path, name: str, workspace: Any, scratch: Path) -> Any:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.runs.append((revision, name, INCIDENT.get()))
            self.order.append(f"run {revision} {name}")
        if self.meeting is not None and name == "incident":
            self.meeting.wait(timeout=10)  # breaks, and fails the test, unless the first two run at once
        assert scratch.is_dir() and tree.name == revision and data.parent.name == name
        with self.lock:
            self.running -= 1
        return FeatureMatrix(revision, name, None, f"{revision} on {name}")

    def recomputation(self, base: FeatureMatrix, candidate: FeatureMatrix, thresholds: Any) -> str:
        self.matrices[:0] = [base, candidate]
        self.order.append("recomputation")
        return "recomputation"

    def drift(self, approval: FeatureMatrix, incident: FeatureMatrix, thresholds: Any) -> str:
        assert incident is self.matrices[0], "drift compares the base revision's two windows"
        self.matrices.append(approval)
        self.order.append("drift")
        return "drift"


def _evidence(monkeypatch: pytest.MonkeyPatch, recorder: Recorder, parallel: int | None, start: bool = True) -> Any:
    monkeypatch.setattr(feature_evidence, "run_features", recorder.run_features)
    monkeypatch.setattr(feature_evidence, "feature_recomputation_evidence", recorder.recomputation)
    monkeypatch.setattr(feature_evidence, "feature_drift_evidence", recorder.drift)
    token = INCIDENT.set("incident-7")
    try:
        with feature_evidence.feature_runs(_inputs(parallel), parallel or 1) as runs:
            if start:
                runs.start()
            INCIDENT.set("changed after the start")  # the runs keep the context they were started in
            return runs.evidence(central_diagnosis_policy())
    finally:
        INCIDENT.reset(token)


def test_with_two_the_first_runs_meet_in_the_starting_threads_context(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(first_two_meet=True)
    assert _evidence(monkeypatch, recorder, parallel=2) == ["recomputation", "drift"]
    assert recorder.most == 2  # never more commands at once than `parallel`
    assert sorted(r[:2] for r in recorder.runs) == sorted(EXPECTED_RUNS)
    assert {r[2] for r in recorder.runs} == {"incident-7"}
    assert [(m.revision, m.data) for m in recorder.matrices] == EXPECTED_RUNS  # in the evidence's order


@pytest.mark.parametrize("parallel", [1, None])
def test_with_one_they_run_one_after_another_in_order(monkeypatch: pytest.MonkeyPatch, parallel: int | None) -> None:
    recorder = Recorder()
    assert _evidence(monkeypatch, recorder, parallel) == ["recomputation", "drift"]
    runs = [f"run {r} {n}" for r, n in EXPECTED_RUNS]
    assert recorder.order[:2] == runs[:2] and recorder.order[-1] == "drift"
    assert recorder.most == 1
    assert [(m.revision, m.data) for m in recorder.matrices] == EXPECTED_RUNS


def test_reading_the_evidence_starts_runs_never_started(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    assert _evidence(monkeypatch, recorder, parallel=2, start=False) == ["recomputation", "drift"]
    assert sorted(r[:2] for r in recorder.runs) == sorted(EXPECTED_RUNS)


class ApprovalWaitsForRecomputation(Recorder):
    """The approval window's run ends only once the recomputation evidence exists: it cannot unless the
    recomputation is computed while that run still goes."""

    def __init__(self) -> None:
        super().__init__()
        self.recomputed = threading.Event()

    def run_features(self, revision: str, tree: Path, data: Path, name: str, workspace: Any, scratch: Path) -> Any:
        found = super().run_features(revision, tree, data, name, workspace, scratch)
        if name == "approval":
            assert self.recomputed.wait(timeout=10), "the recomputation waited for the approval window's run"
        return found

    def recomputation(self, base: FeatureMatrix, candidate: FeatureMatrix, thresholds: Any) -> str:
        found = super().recomputation(base, candidate, thresholds)
        self.recomputed.set()
        return found


def test_with_two_the_recomputation_does_not_wait_for_the_approval_windows_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorder = ApprovalWaitsForRecomputation()
    assert _evidence(monkeypatch, recorder, parallel=2) == ["recomputation", "drift"]
    assert recorder.order.index("recomputation") < recorder.order.index("drift")
    assert [(m.revision, m.data) for m in recorder.matrices] == EXPECTED_RUNS


def test_a_block_that_fails_drops_the_runs_not_yet_begun(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    submitted = threading.Event()
    queued: list[Any] = []
    calls: list[str] = []

    def first_holds(revision: str, tree: Path, data: Path, name: str, workspace: Any, scratch: Path) -> Any:
        """The first run ends only once the two queued behind it were dropped (or 5 s have passed)."""
        calls.append(name)
        if len(calls) == 1:
            assert submitted.wait(timeout=10)
            wait_until(lambda: all(future.cancelled() for future in queued), timeout_s=5)
        return recorder.run_features(revision, tree, data, name, workspace, scratch)

    monkeypatch.setattr(feature_evidence, "run_features", first_holds)
    with (
        pytest.raises(RuntimeError, match="the diagnosis failed"),
        feature_evidence.feature_runs(_inputs(1), 1) as runs,
    ):
        runs.start()
        queued.extend(runs.queued()[1:])
        submitted.set()
        raise RuntimeError("the diagnosis failed")
    assert [r[:2] for r in recorder.runs] == [EXPECTED_RUNS[0]], "the run begun ends; the two queued never run"
