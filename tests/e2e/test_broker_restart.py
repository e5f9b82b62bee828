"""The broker is lost mid-flight and a new, empty one comes up at the same address while the services keep
running, after 2 s (a quick restart) or 25 s (every service stops its consumers and probes on a backoff,
``libs/bus/broker_reachability``). Incidents that were in flight and incidents submitted after the restart
all complete after one `modelguard republish`, none twice: no service carries its position from the dead
broker into the new one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from libs.settings import load_settings
from modelguard.bench import synthetic_reports
from modelguard.broker_restart import republish_once, run_broker_restart
from tests.support.running_stack import environment

pytestmark = [pytest.mark.broker, pytest.mark.e2e]


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("outage_s", [2.0, 25.0], ids=["quick-restart", "long-outage"])
def test_incidents_in_flight_and_after_a_broker_restart_all_complete_after_one_republish(
    tmp_path: Path, outage_s: float
) -> None:
    if os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"):
        pytest.skip("restarts the embedded broker; an external Kafka is not ours to restart")
    with environment({"MODELGUARD_HOME": str(tmp_path / "home")}):
        settings = load_settings()
        figures = run_broker_restart(
            settings, synthetic_reports, republish_once(settings), in_flight=2, after=2, outage_s=outage_s
        )
    summary = "\n".join(figures.lines())
    if outage_s > 10:  # long enough for every service to notice: all stopped their consumers, then resumed
        assert len(figures.paused) == 7, summary
    assert figures.republished >= 1, summary  # the in-flight incidents' last events were re-sent
    assert figures.completed == 4 and figures.lost == {}, summary
    assert figures.duplicated == [], summary
