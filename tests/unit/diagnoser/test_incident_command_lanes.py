"""An incident's commands share its lanes (libs/workspace/command_lanes.py), on the toy repository's real commands:
never more at once than the trial runner's `parallel`; the counterfactual's evaluations begin first, the diff, the
data work and the feature runs after them, and the feature runs fill lanes that come free instead of waiting for the
change experiments that follow the counterfactual."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import libs.workspace.runner as runner
import services.diagnoser.incident_evidence as incident_evidence
from libs.policy.diagnosis import central_diagnosis_policy
from tests.support import toy_repository as toy


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = most = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return most


def test_the_commands_share_the_lanes_and_the_feature_runs_fill_them_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two changed files: the trials that revert one of them each are trees of their own (reverting the only change
    # would give the base tree again, whose evaluation the counterfactual already has)
    inputs = toy.toy_inputs(tmp_path, candidate={"calc": toy.UNGUARDED, "train": "C = 0.5\n"})
    assert inputs.trials is not None
    trees = {Path(inputs.base_dir).resolve(), Path(inputs.candidate_dir).resolve()}
    ran: dict[str, list[tuple[float, float]]] = {"counterfactual": [], "features": [], "trial": []}
    lock = threading.Lock()
    prepared = runner.prepared_command

    @contextlib.contextmanager
    def recording(argv: list[str], cwd: Path, *args: Any, **kwargs: Any) -> Iterator[Any]:
        kind = "features" if "toy.features" in argv else "counterfactual" if Path(cwd).resolve() in trees else "trial"
        with prepared(argv, cwd, *args, **kwargs) as command:
            run = command.run

            def recorded(reaped: Any) -> Any:
                result = run(reaped)
                with lock:
                    ran[kind].append(result.ran)
                return result

            command.run = recorded
            yield command

    data_began: list[float] = []
    data_evidence = incident_evidence._data_evidence

    def data_work(*args: Any) -> Any:
        data_began.append(time.time())
        return data_evidence(*args)

    diff_began: list[float] = []
    diff_trees = incident_evidence.diff_trees

    def diffing(*args: Any) -> Any:
        diff_began.append(time.time())
        return diff_trees(*args)

    monkeypatch.setattr(runner, "prepared_command", recording)
    monkeypatch.setattr(incident_evidence, "_data_evidence", data_work)
    monkeypatch.setattr(incident_evidence, "diff_trees", diffing)
    collected = incident_evidence.collect_incident_evidence(inputs, central_diagnosis_policy())

    assert collected.isolation is not None, "the toy's code change is isolated by trials after the counterfactual"
    assert len(ran["counterfactual"]) == 4 and len(ran["features"]) == 3 and ran["trial"], ran
    every = [span for spans in ran.values() for span in spans]
    assert _most_at_once(every) <= inputs.trials.parallel
    first_evaluation = min(start for start, _ in ran["counterfactual"])
    assert first_evaluation <= min(start for start, _ in ran["features"])
    assert first_evaluation <= data_began[0]
    # the diff holds the interpreter's lock too: read while the evaluations are prepared, it delayed their start
    assert first_evaluation <= diff_began[0]
    # waiting since the counterfactual began, a feature run takes a lane before the trials that need its result
    assert min(start for start, _ in ran["features"]) < min(start for start, _ in ran["trial"])
