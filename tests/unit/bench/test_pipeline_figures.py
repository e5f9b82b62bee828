"""The bench separates a phase's own work from the time its input waited in the queue."""

from __future__ import annotations

from datetime import timedelta

from contracts.common import PolicyRef
from contracts.events.evaluation import RegressionDetected
from libs.events.codec import seal
from libs.events.factory import next_event
from modelguard.bench import pipeline_figures
from tests.support.sample_events import AT, Keys, artifact, evaluation, gate


def _incident(keys: Keys, run: str, reported_at: float, detected_at: float) -> list:  # type: ignore[type-arg]
    payload = evaluation(run_id=run, seed=run)
    first = seal(
        next_event(
            payload,
            producer="reporter",
            producer_version="t",
            occurred_at=AT + timedelta(seconds=reported_at),
            incident_id="inc-" + run.encode().hex().ljust(16, "0")[:16],
        ),
        keys["reporter"],
    )
    detected = RegressionDetected(
        run_id=run, workspace=payload.workspace, policy=PolicyRef(name="p", artifact=artifact(b"p")), gate=gate()
    )
    second = seal(
        next_event(
            detected,
            producer="detector",
            producer_version="t",
            occurred_at=AT + timedelta(seconds=detected_at),
            causes=[first],
        ),
        keys["detector"],
    )
    return [first, second]


def test_queueing_counts_in_latency_not_in_service_time() -> None:
    keys = Keys("reporter", "detector")
    # both reported at t=0; the detector finishes the first at t=2 and the second at t=3
    figures = pipeline_figures({"a": _incident(keys, "a", 0, 2), "b": _incident(keys, "b", 0, 3)})
    assert sorted(figures.latency["detect"]) == [2.0, 3.0]
    assert sorted(figures.service["detect"]) == [1.0, 2.0]
    assert sorted(figures.end_to_end) == [2.0, 3.0]
