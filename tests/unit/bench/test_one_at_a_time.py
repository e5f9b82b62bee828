"""The pipeline bench's one-at-a-time pass: each report is signed only once the incident before it has published
(its time starts when it is reported), an incident that does not publish ends the pass, and the figures printed are
the incidents' own."""

from __future__ import annotations

from libs.events.codec import SignedEvent
from modelguard.one_at_a_time import one_at_a_time_lines, report_one_at_a_time
from modelguard.pipeline_overhead import IncidentTime
from tests.support.sample_events import Keys, reported


def test_each_report_is_signed_after_the_one_before_it_published() -> None:
    keys = Keys("reporter")
    calls: list[str] = []

    def sign(seed: str) -> SignedEvent:
        calls.append(f"sign {seed}")
        return reported(keys, run_id=f"run-{seed}", seed=seed)

    def published(incident: str) -> list[SignedEvent] | None:
        calls.append("wait")
        return [] if len(calls) < 9 else None  # the third incident never publishes

    done = report_one_at_a_time(
        ["a", "b", "c", "d"], sign, lambda report: calls.append(f"publish {report.event.payload.run_id}"), published
    )
    assert calls == [
        "sign a",
        "publish run-a",
        "wait",
        "sign b",
        "publish run-b",
        "wait",
        "sign c",
        "publish run-c",
        "wait",
    ]
    assert list(done) == [reported(keys, run_id=f"run-{s}", seed=s).event.meta.incident_id for s in "ab"]


def _time(incident: str, own: float, commands: float, waited: float, detect: float) -> IncidentTime:
    time = IncidentTime(incident, end_to_end=10.0, own_work=own, commands=commands)
    time.waited_by_phase = {"detect": waited / 2, "context": waited / 2}
    time.by_phase = {"context": own - commands - detect, "detect": detect}
    return time


def test_the_lines_give_the_incidents_own_figures() -> None:
    times = [
        _time("a", 6.200, 6.000, 0.040, 0.050),
        _time("b", 7.300, 7.000, 0.080, 0.090),
        _time("c", 5.250, 5.000, 0.060, 0.070),
    ]
    first, second = one_at_a_time_lines(times, 4, ("detect", "context"))
    # own work less commands: 200, 300 and 250 ms
    assert "(3 of 4 incidents, each alone on the stack): ModelGuard p50 250 ms (p95 300)" in first
    assert "beside commands p50 6.00 s" in first
    assert "the bus delivering the inputs p50 60 ms" in second
    assert "handling them outside their commands p50 190 ms" in second  # 250 less the 60 the bus took
    assert second.index("detect 70") < second.index("context 180")  # in the order given, not the dict's


def test_a_pass_where_nothing_published_says_so() -> None:
    assert one_at_a_time_lines([], 4, ("detect",)) == ["\none at a time: none of 4 incidents published"]
