"""The pipeline bench splits each incident's time into its workspace commands and ModelGuard's own: commands side by
side count once, queueing behind another incident is not overhead, other incidents' and other services' commands
are not this phase's, and evaluations measured twice are named."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from contracts.common import PolicyRef
from contracts.events.evaluation import RegressionDetected
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from libs.telemetry import incident_trace_id
from modelguard.pipeline_overhead import (
    CommandSpan,
    Delivery,
    EvaluationSpan,
    Spans,
    at_once,
    command_label,
    incident_times,
    measured_twice,
    read_spans,
    union_seconds,
)
from tests.support.sample_events import AT, Keys, artifact, evaluation, gate

T0 = AT.timestamp()


def _incident(keys: Keys, run: str, detected_at: float) -> list[SignedEvent]:
    payload = evaluation(run_id=run, seed=run)
    incident = "inc-" + run.encode().hex().ljust(16, "0")[:16]
    first = seal(
        next_event(payload, producer="reporter", producer_version="t", occurred_at=AT, incident_id=incident),
        keys["reporter"],
    )
    detected = RegressionDetected(
        run_id=run, workspace=payload.workspace, policy=PolicyRef(name="p", artifact=artifact(b"p")), gate=gate()
    )
    at = AT + timedelta(seconds=detected_at)
    second = seal(
        next_event(detected, producer="detector", producer_version="t", occurred_at=at, causes=[first]),
        keys["detector"],
    )
    return [first, second]


def test_commands_side_by_side_count_once_and_queueing_is_not_overhead() -> None:
    keys = Keys("reporter", "detector")
    a, b = _incident(keys, "a", 3.0), _incident(keys, "b", 5.0)  # b waits for a: its own work is 3..5
    ta, tb = (incident_trace_id(e[0].event.meta.incident_id) for e in (a, b))
    spans = Spans(
        [
            CommandSpan("detector", ta, "predict.py", T0 + 0.5, T0 + 2.5),
            CommandSpan("detector", ta, "predict.py", T0 + 1.0, T0 + 2.0),  # beside the first
            CommandSpan("diagnoser", ta, "pytest", T0 + 0.0, T0 + 3.0),  # another service's
            CommandSpan("detector", tb, "predict.py", T0 + 3.2, T0 + 4.2),
        ],
        [],
    )

    first, second = incident_times({"a": a, "b": b}, spans)

    assert (first.own_work, first.commands, first.overhead) == pytest.approx((3.0, 2.0, 1.0))
    assert first.runs[("detector", "predict.py")] == 2 and first.runs[("diagnoser", "pytest")] == 1
    assert first.by_phase == pytest.approx({"detect": 1.0})
    assert (second.end_to_end, second.own_work, second.overhead) == pytest.approx((5.0, 2.0, 1.0))


def test_the_wait_for_an_input_is_split_from_handling_it() -> None:
    """A phase's overhead is the wait until its service took the input (the bus delivering it) and the handling
    outside the commands; a delivery to another service, in another incident or outside the window is not it."""
    keys = Keys("reporter", "detector")
    a, b = _incident(keys, "a", 3.0), _incident(keys, "b", 5.0)  # b queues behind a: its window is 3..5
    ta, tb = (incident_trace_id(e[0].event.meta.incident_id) for e in (a, b))
    spans = Spans(
        [
            CommandSpan("detector", ta, "predict.py", T0 + 0.5, T0 + 2.5),
            CommandSpan("detector", tb, "p", T0 + 3.5, T0 + 4.5),
        ],
        [],
        [
            Delivery("ledger", ta, T0 + 0.01),  # not a phase's service
            Delivery("detector", tb, T0 + 0.05),  # another incident's trace, before its window
            Delivery("detector", ta, T0 + 0.25),
            Delivery("detector", ta, T0 + 3.5),  # after the window: a redelivery
            Delivery("detector", tb, T0 + 3.1),
        ],
    )

    first, second = incident_times({"a": a, "b": b}, spans)

    assert first.overhead == pytest.approx(1.0) and first.waited == pytest.approx(0.25)
    assert first.waited_by_phase == pytest.approx({"detect": 0.25})
    assert first.handling == pytest.approx(0.75)
    assert (second.overhead, second.waited, second.handling) == pytest.approx((1.0, 0.1, 0.9))


def test_an_input_without_a_delivery_span_is_all_handling() -> None:
    keys = Keys("reporter", "detector")
    (time,) = incident_times({"a": _incident(keys, "a", 2.0)}, Spans([], []))
    assert (time.overhead, time.waited, time.handling) == pytest.approx((2.0, 0.0, 2.0))


def test_labels_unions_and_evaluations_measured_twice(tmp_path: Path) -> None:
    assert command_label("('python', 'predict.py', '--train', '/x/train.csv')") == "predict.py"
    assert command_label("('python', '-m', 'pytest', '-q')") == "pytest"
    assert command_label("('python', '-c', 'import json')") == "python -c"
    assert command_label("('python', '-I', '-c', 'import json', 'a.py')") == "python -c"  # the interpreter's flags
    assert command_label("('python', '-X', 'utf8', '-m', 'pytest')") == "pytest"
    assert union_seconds([(0, 2), (1, 3), (5, 6)]) == 4
    evaluations = [
        EvaluationSpan("detector", "t", "k1", False),
        EvaluationSpan("diagnoser", "t", "k1", True),
        EvaluationSpan("diagnoser", "t", "k2", False),
        EvaluationSpan("validator", "t", "k2", False),
    ]
    assert measured_twice(evaluations) == {"k2": 2}
    lines = [
        {"name": "workspace command python", "service": "modelguard-detector", "trace_id": "t", "start_ns": 1e9,
         "end_ns": 3e9, "attributes": {"process.command_args": "('python', 'predict.py')"}},
        {"name": "workspace evaluation", "service": "modelguard-diagnoser", "trace_id": "t", "start_ns": 0,
         "end_ns": 1, "attributes": {"modelguard.evaluation.key": "k1", "modelguard.evaluation.cached": "True"}},
    ]  # fmt: skip
    (tmp_path / "traces.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    spans = read_spans(tmp_path / "traces.jsonl")
    assert spans.commands == [CommandSpan("detector", "t", "predict.py", 1.0, 3.0)]
    assert spans.evaluations == [EvaluationSpan("diagnoser", "t", "k1", True)]


def test_a_consumer_s_process_span_is_when_its_service_took_the_input(tmp_path: Path) -> None:
    def span(name: str, operation: str | None) -> dict[str, object]:
        attributes = {} if operation is None else {"messaging.operation": operation}
        return {"name": name, "service": "modelguard-repairer", "trace_id": "t", "start_ns": 2.5e9, "end_ns": 3e9,
                "attributes": attributes}  # fmt: skip

    lines = [
        span("modelguard.diagnosis-completed.v1 process", "process"),
        span("modelguard.repair-proposed.v1 publish", "publish"),
        span("modelguard.repair-proposed.v1 create", None),
    ]
    (tmp_path / "traces.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    assert read_spans(tmp_path / "traces.jsonl").deliveries == [Delivery("repairer", "t", 2.5)]


def test_a_command_span_s_cpu_time_is_read_from_its_text_attribute(tmp_path: Path) -> None:
    def command(cpu: str | None) -> dict[str, object]:
        attributes = {"process.command_args": "('python', 'predict.py')"}
        if cpu is not None:
            attributes["modelguard.command.cpu_s"] = cpu
        return {"name": "workspace command python", "service": "modelguard-validator", "trace_id": "t",
                "start_ns": 0, "end_ns": 1e9, "attributes": attributes}  # fmt: skip

    lines = [command("1.25"), command(None), command("nan"), command("-1"), command("lots")]
    (tmp_path / "traces.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    assert [c.cpu_s for c in read_spans(tmp_path / "traces.jsonl").commands] == [1.25, None, None, None, None]


def test_incidents_at_once_are_held_against_their_commands_cpu_time_over_the_cores() -> None:
    keys = Keys("reporter", "detector")
    a, b, other = _incident(keys, "a", 3.0), _incident(keys, "b", 5.0), _incident(keys, "c", 1.0)
    ta, tb, tc = (incident_trace_id(e[0].event.meta.incident_id) for e in (a, b, other))
    spans = Spans(
        [
            CommandSpan("detector", ta, "predict.py", T0, T0 + 2, cpu_s=3.0),
            CommandSpan("diagnoser", tb, "pytest", T0, T0 + 1, cpu_s=1.0),
            CommandSpan("validator", tb, "predict.py", T0, T0 + 1),  # on a runner: no CPU reading
            CommandSpan("detector", tc, "predict.py", T0, T0 + 9, cpu_s=50.0),  # not one of them
        ],
        [],
    )

    figure = at_once({"a": a, "b": b}, spans, wall_s=2.6, cores=2)

    assert (figure.incidents, figure.commands, figure.measured) == (2, 3, 2)
    assert figure.commands_cpu_s == pytest.approx(4.0) and figure.floor_s == pytest.approx(2.0)
    assert figure.ratio == pytest.approx(1.3)
    assert "2 incidents at once: 2.6 s wall" in figure.line() and "wall / that floor 1.30" in figure.line()
    assert at_once({}, spans, wall_s=1.0, cores=2).ratio is None


def test_a_command_s_time_is_when_its_process_ran_not_the_sandbox_s_preparation(tmp_path: Path) -> None:
    def command(ran: tuple[str, str] | None) -> dict[str, object]:
        attributes = {"process.command_args": "('python', 'predict.py')"}
        if ran is not None:
            attributes |= {"modelguard.command.ran_from": ran[0], "modelguard.command.ran_until": ran[1]}
        return {"name": "workspace command python", "service": "modelguard-validator", "trace_id": "t",
                "start_ns": 10e9, "end_ns": 12e9, "attributes": attributes}  # fmt: skip

    lines = [
        command(("10.25", "11.5")),  # the process ran within its span: that is the command's time
        command(None),  # a runner or a Job that did not say: the whole span
        command(("9.5", "11.0")),  # not within the span (another clock): the whole span
        command(("11.5", "10.5")),  # ends before it starts: the whole span
        command(("soon", "11.0")),
    ]
    (tmp_path / "traces.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    found = [(c.start, c.end) for c in read_spans(tmp_path / "traces.jsonl").commands]
    assert found == [(10.25, 11.5), (10.0, 12.0), (10.0, 12.0), (10.0, 12.0), (10.0, 12.0)]
