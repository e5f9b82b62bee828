"""Chaos with the supervisor on: random services SIGKILLed (seeded) while synthetic churn incidents run over
the real broker. Every incident completes, none is published twice, the ledger verifies, and every killed
service came back (``modelguard bench chaos`` prints the same figures)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from modelguard.bench import synthetic_reports
from modelguard.chaos import run_chaos
from tests.support.running_stack import running_stack

pytestmark = [pytest.mark.broker, pytest.mark.e2e]

INCIDENTS = int(os.environ.get("MODELGUARD_CHAOS_INCIDENTS", "20"))
KILLS = int(os.environ.get("MODELGUARD_CHAOS_KILLS", "22"))


@pytest.mark.timeout(2700)
def test_incidents_survive_random_sigkills_exactly_once(tmp_path: Path) -> None:
    with running_stack(tmp_path / "home") as stack:
        reports = synthetic_reports(stack.settings, INCIDENTS)
        figures = run_chaos(stack.settings, stack.state, reports, KILLS, seed=11, pause_s=(1.0, 4.0))
    summary = "\n".join(figures.lines())
    assert len(figures.kills) >= min(KILLS, 3), summary  # the stack really was disturbed
    assert figures.completed == INCIDENTS and figures.lost == [], summary
    assert figures.duplicated == [], summary
    assert figures.ledger_verified, summary
    assert len(figures.recovery_s) == len(figures.kills), summary  # every killed service came back
