"""The trials of one run share the incident's lanes: within them, the trial beyond the lanes is begun (its command
prepared) while the others hold them, and no more than the runner's `parallel` run at once."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import services.diagnoser.trials.runner as trial_runner
from libs.workspace.command_lanes import sharing_lanes
from services.diagnoser.trials.trial import Trial
from tests.support import toy_repository as toy
from tests.support.lane_holding import LaneHolding


class LaneHolders:
    """Evaluations that take a lane as a command does; the first two to take one hold it until the third trial has
    begun."""

    def __init__(self, metric: str) -> None:
        self.metric = metric
        self.holding = LaneHolding()

    def evaluate(self, tree: Path, window: Any, workspace: Any, gate: Any) -> Any:
        self.holding.begin(tree)
        with self.holding.lane() as order:
            if order <= 2:
                self.holding.hold_until_enough_begun("trial")
        return SimpleNamespace(metrics={self.metric: 0.5}, scored=None)


def test_within_the_lanes_the_trial_beyond_them_is_begun_while_the_first_two_hold_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = toy.toy_inputs(tmp_path)
    assert inputs.trials is not None
    runner = dataclasses.replace(inputs.trials, parallel=2, cache=None, records=[])
    holders = LaneHolders(inputs.gate.metric)
    monkeypatch.setattr(trial_runner, "evaluate_model", holders.evaluate)
    trees = [toy.write_tree(tmp_path / f"tree-{n}", train=f"C = 0.{n + 1}\n") for n in range(3)]
    trials = [Trial(f"trial {n}", tree, inputs.incident) for n, tree in enumerate(trees)]
    with sharing_lanes(2):
        outcomes = runner.run(trials)
    assert [o.metric for o in outcomes] == [0.5, 0.5, 0.5], [o.failure for o in outcomes]
    assert holders.holding.most_held == 2  # the lanes still hold them to two at once
    assert sorted(holders.holding.begun) == sorted(trees)
