"""The incident's three feature runs, started early and read later: the same runs in the evidence's order, each in the
context of the thread that started them, up to the trial runner's `parallel` at once (within the incident's lanes the
third is begun while the first two hold them); the recomputation does not
wait for the approval window's run; a block that fails drops the runs not yet begun."""

from __future__ import annotations

import threading
from contextvars import ContextVar, copy_context
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import services.diagnoser.feature_evidence as feature_evidence
from libs.policy.diagnosis import central_diagnosis_policy
from libs.sandbox.command_start import command_started
from libs.workspace.command_lanes import in_a_lane, sharing_lanes
from services.diagnoser.feature_runs import FeatureMatrix
from tests.support.lane_holding import LaneHolding
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


class ThirdBegunWhileTheLanesAreHeld(Recorder):
    """Each run takes one of the incident's lanes as a command does; the two incident-window runs hold theirs until
    the approval window's run has begun (its command prepared, waiting for a lane)."""

    def __init__(self) -> None:
        super().__init__()
        self.holding = LaneHolding()

    def run_features(self, revision: str, tree: Path, data: Path, name: str, workspace: Any, scratch: Path) -> Any:
        self.holding.begin(name)
        with self.holding.lane():
            found = super().run_features(revision, tree, data, name, workspace, scratch)
            if name == "incident":
                self.holding.hold_until_enough_begun("run")
        return found


def test_within_the_incidents_lanes_the_third_run_is_begun_while_the_first_two_hold_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorder = ThirdBegunWhileTheLanesAreHeld()
    with sharing_lanes(2):
        assert _evidence(monkeypatch, recorder, parallel=2) == ["recomputation", "drift"]
    assert recorder.holding.most_held == 2  # the lanes still hold them to two at once
    assert [(m.revision, m.data) for m in recorder.matrices] == EXPECTED_RUNS


class LanesTaken(Recorder):
    """Each run takes a lane as a command does and then begins its command; the incident window's runs are held
    before their lanes until the test lets them go, while the approval window's run goes straight to the lanes."""

    def __init__(self) -> None:
        super().__init__()
        self.approval_prepared = threading.Event()
        self.incident_runs_may_go = threading.Event()
        self.taken: list[str] = []

    def run_features(self, revision: str, tree: Path, data: Path, name: str, workspace: Any, scratch: Path) -> Any:
        if name == "approval":
            self.approval_prepared.set()
        else:
            assert self.incident_runs_may_go.wait(timeout=10)
        with in_a_lane():
            with self.lock:
                self.taken.append(name)
            command_started()  # as the sandbox says once the command's process is let go
            return super().run_features(revision, tree, data, name, workspace, scratch)


def test_the_approval_windows_run_takes_a_lane_only_once_both_incident_window_runs_began(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The approval window's run, prepared first, is alone at the lanes when one comes free: it still waits for the
    incident window's runs to begin theirs, whose recomputation is computed while it runs."""
    recorder = LanesTaken()
    found: list[Any] = []
    # the lanes are held at first as by the counterfactual's two evaluations
    with sharing_lanes(2), in_a_lane() as free_first, in_a_lane() as free_second:
        diagnosing = threading.Thread(
            target=copy_context().run, args=(lambda: found.append(_evidence(monkeypatch, recorder, 2)),)
        )
        diagnosing.start()
        assert recorder.approval_prepared.wait(timeout=10)
        free_first()
        assert not wait_until(lambda: recorder.taken != [], timeout_s=0.3), "it took the lane given back"
        recorder.incident_runs_may_go.set()
        free_second()
        diagnosing.join(timeout=30)
    assert found == [["recomputation", "drift"]]
    assert recorder.taken == ["incident", "incident", "approval"]
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
