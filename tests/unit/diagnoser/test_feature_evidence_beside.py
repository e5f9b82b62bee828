"""The feature runs beside the diagnoser's own work: at once (up to the trial runner's `parallel`) or one after
another, the same runs in the same order, each in the caller's context; at once, the own work starts once the first
runs' commands have begun (or those runs ended without one), not while they are being prepared."""

from __future__ import annotations

import threading
import time
from contextvars import ContextVar
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import services.diagnoser.feature_evidence as feature_evidence
from libs.policy.diagnosis import central_diagnosis_policy
from libs.sandbox.command_start import command_started
from services.diagnoser.feature_runs import FeatureMatrix

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
    def __init__(self, barrier: threading.Barrier | None = None) -> None:
        self.barrier, self.lock, self.met = barrier, threading.Lock(), threading.Event()
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
        command_started()  # as the sandbox says once the run's command is let go
        self._meet()
        assert scratch.is_dir() and tree.name == revision and data.parent.name == name
        with self.lock:
            self.running -= 1
        return FeatureMatrix(revision, name, None, f"{revision} on {name}")

    def meanwhile(self) -> str:
        self.order.append("meanwhile")
        self._meet()
        return "data evidence"

    def _meet(self) -> None:
        """The first two runs and the own work wait for each other: the barrier breaks (and fails the test) unless
        all three run at the same time. The third run comes after one of the first two, and meets no one."""
        if self.barrier is not None and not self.met.is_set():
            self.barrier.wait(timeout=10)
            self.met.set()

    def recomputation(self, base: FeatureMatrix, candidate: FeatureMatrix, thresholds: Any) -> str:
        self.matrices[:0] = [base, candidate]
        self.order.append("recomputation")
        return "recomputation"

    def drift(self, approval: FeatureMatrix, incident: FeatureMatrix, thresholds: Any) -> str:
        assert incident is self.matrices[0], "drift compares the base revision's two windows"
        self.matrices.append(approval)
        self.order.append("drift")
        return "drift"


def _run(monkeypatch: pytest.MonkeyPatch, recorder: Recorder, parallel: int | None) -> str:
    monkeypatch.setattr(feature_evidence, "run_features", recorder.run_features)
    monkeypatch.setattr(feature_evidence, "feature_recomputation_evidence", recorder.recomputation)
    monkeypatch.setattr(feature_evidence, "feature_drift_evidence", recorder.drift)
    token = INCIDENT.set("incident-7")
    try:
        found, _ = feature_evidence.feature_evidence_beside(
            _inputs(parallel), central_diagnosis_policy(), recorder.meanwhile
        )
    finally:
        INCIDENT.reset(token)
    return found


def test_with_two_the_runs_meet_each_other_and_the_diagnosers_own_work(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(threading.Barrier(3))  # two feature runs and the data work, all at once
    assert _run(monkeypatch, recorder, parallel=2) == "data evidence"
    assert recorder.most == 2  # never more commands at once than `parallel`
    assert sorted(r[:2] for r in recorder.runs) == sorted(EXPECTED_RUNS)
    assert {r[2] for r in recorder.runs} == {"incident-7"}  # each run saw the caller's context
    assert [(m.revision, m.data) for m in recorder.matrices] == EXPECTED_RUNS  # in the evidence's order


@pytest.mark.parametrize("parallel", [1, None])
def test_with_one_they_run_one_after_another_after_the_own_work(
    monkeypatch: pytest.MonkeyPatch, parallel: int | None
) -> None:
    recorder = Recorder()
    assert _run(monkeypatch, recorder, parallel) == "data evidence"
    runs = [f"run {r} {n}" for r, n in EXPECTED_RUNS]
    assert recorder.order == ["meanwhile", *runs[:2], "recomputation", runs[2], "drift"]
    assert recorder.most == 1
    assert [(m.revision, m.data) for m in recorder.matrices] == EXPECTED_RUNS


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
    assert _run(monkeypatch, recorder, parallel=2) == "data evidence"
    assert recorder.order.index("recomputation") < recorder.order.index("drift")
    assert [(m.revision, m.data) for m in recorder.matrices] == EXPECTED_RUNS


class SlowToPrepare(Recorder):
    """Each run's command takes a while to be prepared before it begins, as a sandboxed command's does."""

    def run_features(self, revision: str, tree: Path, data: Path, name: str, workspace: Any, scratch: Path) -> Any:
        time.sleep(0.2)
        with self.lock:
            self.order.append(f"prepared {revision} {name}")
        return super().run_features(revision, tree, data, name, workspace, scratch)


def test_with_two_the_own_work_starts_once_the_first_runs_commands_have_begun(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorder = SlowToPrepare()
    assert _run(monkeypatch, recorder, parallel=2) == "data evidence"
    meanwhile = recorder.order.index("meanwhile")
    assert {f"run {r} {n}" for r, n in EXPECTED_RUNS[:2]} <= set(recorder.order[:meanwhile]), recorder.order


class NoCommand(Recorder):
    """Runs that end without a command begun: a result from the cache, a refusal."""

    def run_features(self, revision: str, tree: Path, data: Path, name: str, workspace: Any, scratch: Path) -> Any:
        with self.lock:
            self.order.append(f"run {revision} {name}")
        return FeatureMatrix(revision, name, None, "no command")


def test_runs_that_end_without_a_command_do_not_hold_the_own_work_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feature_evidence, "BEGIN_WAIT_S", 60.0)
    started = time.monotonic()
    assert _run(monkeypatch, NoCommand(), parallel=2) == "data evidence"
    assert time.monotonic() - started < 30  # it did not wait for a command that never came


class NeverBegins(Recorder):
    """A run whose command is still being prepared (a workspace environment being built) when the own work starts:
    the run waits for the own work, which must not wait for it beyond ``BEGIN_WAIT_S``."""

    def __init__(self) -> None:
        super().__init__()
        self.own_work_done = threading.Event()

    def run_features(self, revision: str, tree: Path, data: Path, name: str, workspace: Any, scratch: Path) -> Any:
        assert self.own_work_done.wait(timeout=30), "the own work waited for a command that had not begun"
        return FeatureMatrix(revision, name, None, "late")

    def meanwhile(self) -> str:
        self.own_work_done.set()
        return "data evidence"


def test_the_own_work_waits_for_a_command_to_begin_no_longer_than_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feature_evidence, "BEGIN_WAIT_S", 0.2)
    assert _run(monkeypatch, NeverBegins(), parallel=2) == "data evidence"
