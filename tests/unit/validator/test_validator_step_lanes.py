"""The validator's tests and evaluation run at once when allowed, and the report is the one the steps give one
after another, whichever step fails."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from contextvars import ContextVar

import pytest

from libs.sandbox.command_start import command_started
from libs.workspace.command_lanes import in_a_lane
from services.validator.checks import CheckResult
from services.validator.step_lanes import Step, run_steps

ORDER = ("compiles", "targeted_tests", "tests", "evaluation", "invalid_values", "gate")


def _steps(
    failing: str | None,
    ran: list[str],
    wait: Callable[[str], None] = lambda name: None,
    during: Callable[[str], None] = lambda name: None,
) -> list[Step]:
    """Each step's "command" is where a workspace command would run (``in_a_lane``, as ``run_command`` takes it, then
    begun as the sandbox tells it): what happens before it (``wait``) is the step's preparation, ``during`` its
    process."""

    def step(name: str) -> Callable[[], CheckResult]:
        def run() -> CheckResult:
            wait(name)
            with in_a_lane():
                ran.append(name)
                command_started()
                during(name)
            status = "failed" if name == failing else "passed"
            return CheckResult(name=name, status=status, detail=f"{name} {status}")

        return run

    return [(name, step(name)) for name in ORDER]


def _report(failing: str | None, parallel: int, earlier: list[CheckResult] | None = None) -> list[tuple[str, str, str]]:
    checks = list(earlier or [])
    run_steps(_steps(failing, []), checks, parallel)
    return [(c.name, c.status, c.detail) for c in checks]


@pytest.mark.parametrize("failing", [None, *ORDER])
def test_the_report_is_the_same_one_after_another_and_at_once(failing: str | None) -> None:
    one_by_one = _report(failing, parallel=1)
    assert _report(failing, parallel=2) == one_by_one
    if failing is not None:
        after = ORDER[ORDER.index(failing) + 1 :]
        assert [status for _, status, _ in one_by_one[len(ORDER) - len(after) :]] == ["skipped"] * len(after)
        assert all(detail == f"not run: {failing} did not pass" for name, _, detail in one_by_one if name in after)


def test_after_an_earlier_failure_no_step_runs_either_way() -> None:
    earlier = [CheckResult(name="patch_applies", status="failed", detail="does not apply")]
    for parallel in (1, 2):
        ran: list[str] = []
        checks = list(earlier)
        run_steps(_steps(None, ran), checks, parallel)
        assert ran == []
        assert [c.status for c in checks[1:]] == ["skipped"] * len(ORDER)


def test_nothing_runs_beside_compiles_and_a_lane_stops_at_its_own_failure() -> None:
    ran: list[str] = []
    run_steps(_steps("compiles", ran), [], parallel=2)
    assert ran == ["compiles"]
    ran = []
    run_steps(_steps("targeted_tests", ran), [], parallel=2)
    assert "tests" not in ran and {"evaluation", "invalid_values"} <= set(ran) and "gate" not in ran


def test_the_tests_run_beside_the_evaluation_only_when_allowed() -> None:
    """Each lane's first step waits for the other's at a barrier: it is passed only if both run at once."""
    meeting = threading.Barrier(2, timeout=30)
    firsts = {"targeted_tests", "evaluation"}

    def wait(name: str) -> None:
        if name in firsts:
            meeting.wait()

    ran: list[str] = []
    checks: list[CheckResult] = []
    run_steps(_steps(None, ran, wait), checks, parallel=2)
    assert all(c.passed for c in checks) and sorted(ran) == sorted(ORDER)

    alone = threading.Barrier(2, timeout=0.5)  # one at a time, the other party never comes

    def wait_alone(name: str) -> None:
        if name in firsts:
            alone.wait()

    with pytest.raises(threading.BrokenBarrierError):
        run_steps(_steps(None, [], wait_alone), [], parallel=1)


def _failing_steps(failing: tuple[str, ...]) -> list[Step]:
    def step(name: str) -> Callable[[], CheckResult]:
        status = "failed" if name in failing else "passed"
        return lambda: CheckResult(name=name, status=status, detail=status)

    return [(name, step(name)) for name in ORDER]


def test_every_pattern_of_two_failures_reports_the_first_in_order() -> None:
    for pair in itertools.combinations(ORDER, 2):
        reports = []
        for parallel in (1, 2):
            checks: list[CheckResult] = []
            run_steps(_failing_steps(pair), checks, parallel)
            reports.append([(c.name, c.status) for c in checks])
        assert reports[0] == reports[1]
        assert [name for name, status in reports[1] if status == "failed"] == [pair[0]]


TRACE: ContextVar[str] = ContextVar("trace", default="none")


def test_the_lanes_run_in_the_callers_context() -> None:
    """A command's span finds the incident's trace in its context: the lanes' threads must see the caller's."""
    seen: dict[str, str] = {}

    def record(name: str) -> None:
        seen[name] = TRACE.get()

    token = TRACE.set("incident-7")
    try:
        run_steps(_steps(None, [], record), [], parallel=2)
    finally:
        TRACE.reset(token)
    assert seen == dict.fromkeys(ORDER, "incident-7")


def test_the_data_check_runs_in_whichever_lane_comes_free_first() -> None:
    """The evaluation ends only once the data check has run: with two at once, the check must run while the evaluation
    still goes, after the tests (it waits for nothing but ``compiles``), not after the evaluation."""
    checked, evaluating = threading.Event(), threading.Event()
    running: list[str] = []
    most = 0
    lock = threading.Lock()

    def wait(name: str) -> None:
        nonlocal most
        with lock:
            running.append(name)
            most = max(most, len(running))
        if name == "targeted_tests":  # the lanes start together: the other lane's first step is under way too
            assert evaluating.wait(timeout=30), "the evaluation did not start beside the tests"
        if name == "evaluation":
            evaluating.set()
            assert checked.wait(timeout=30), "the data check waited for the evaluation"
        if name == "invalid_values":
            checked.set()
        with lock:
            running.remove(name)

    ran: list[str] = []
    checks: list[CheckResult] = []
    run_steps(_steps(None, ran, wait), checks, parallel=2)
    assert [c.name for c in checks] == list(ORDER) and all(c.passed for c in checks)
    assert most == 2  # never more steps at once than allowed


def test_the_lanes_are_prepared_while_compiles_runs_and_their_commands_wait_for_it() -> None:
    """``compiles``' command goes on until both lanes have prepared theirs: possible only if they prepare while it
    runs; they start only once it has begun, and no lane's command runs before it has ended."""
    prepared = threading.Barrier(3, timeout=30)
    events: list[str] = []

    def wait(name: str) -> None:
        events.append(f"{name} prepares")
        if name in ("targeted_tests", "evaluation"):
            prepared.wait()

    def during(name: str) -> None:
        events.append(f"{name} runs")
        if name == "compiles":
            prepared.wait()
            events.append("compiles ends")

    ran: list[str] = []
    checks: list[CheckResult] = []
    run_steps(_steps(None, ran, wait, during), checks, parallel=2)
    assert all(c.passed for c in checks) and sorted(ran) == sorted(ORDER)
    assert events[0] == "compiles prepares" and ran[0] == "compiles"
    lane_runs = [i for i, event in enumerate(events) if event.endswith(" runs") and event != "compiles runs"]
    assert len(lane_runs) == len(ORDER) - 1 and events.index("compiles ends") < min(lane_runs)


def test_when_compiles_fails_the_lanes_prepared_beside_it_run_no_command() -> None:
    prepared: list[str] = []
    ran: list[str] = []

    def wait(name: str) -> None:
        prepared.append(name)

    checks: list[CheckResult] = []
    run_steps(_steps("compiles", ran, wait), checks, parallel=2)
    assert ran == ["compiles"]
    assert {"targeted_tests", "evaluation"} <= set(prepared)  # they did start, and stopped at their command
    assert [(c.name, c.status) for c in checks] == [("compiles", "failed")] + [(n, "skipped") for n in ORDER[1:]]


def test_a_compiles_step_that_raises_withdraws_the_lanes() -> None:
    ran: list[str] = []
    steps = dict(_steps(None, ran))

    def broken() -> CheckResult:
        raise RuntimeError("a bug in the compile check")

    steps["compiles"] = broken
    with pytest.raises(RuntimeError, match="a bug in the compile check"):
        run_steps(list(steps.items()), [], parallel=2)
    assert ran == []
