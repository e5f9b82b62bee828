"""The lane hand-off figure (modelguard/bench_lane_handoff.py): how long each lane stood idle between the command it
ran and the next, from the commands' own run times."""

from __future__ import annotations

import pytest

from modelguard.bench_lane_handoff import hand_offs


def test_each_later_command_takes_the_lane_reaped_last_before_it_started() -> None:
    ran = [(0.0, 1.0), (0.0, 2.0), (1.010, 3.0), (2.004, 4.0), (3.002, 5.0)]
    assert hand_offs(ran, 2) == pytest.approx([0.010, 0.004, 0.002])


def test_the_order_given_does_not_matter() -> None:
    ran = [(0.0, 1.0), (0.0, 2.0), (1.010, 3.0), (2.004, 4.0)]
    assert hand_offs(list(reversed(ran)), 2) == pytest.approx(hand_offs(ran, 2))


def test_as_many_commands_as_lanes_hand_nothing_off() -> None:
    assert hand_offs([(0.0, 1.0), (0.5, 2.0)], 2) == []


def test_a_command_let_go_before_any_lane_was_free_counts_no_idle_time() -> None:
    # one lane: the second command cannot have started before the first was reaped; if the clocks say so, nothing
    # stood idle rather than a negative time
    assert hand_offs([(0.0, 1.0), (0.999, 2.0)], 1) == [0.0]
