"""The validation steps after the patch applies, in order, each only when every check before it passed (a step after
a failure is reported ``skipped`` with the failure named).

With ``parallel`` of 2 or more, the steps that read the repaired copy without depending on each other run at once once
``compiles`` passed (prepared while its command runs: their commands wait behind it), up to ``parallel`` lanes at a
time, in the order given: the tests (targeted, then the whole suite), the evaluation (the re-run), the data check (the
repaired features' invalid values). With two at once the data check runs in whichever of the first two lanes comes free
first: it waits for nothing but ``compiles``, and run after the evaluation (the longest step in the common case) it kept
the validation about 130 ms longer. Each lane stops at its own first failure. The report is the one the steps give one
after another: a lane's result that follows an earlier failure in the order is reported ``skipped``, as if it had not
run (its commands did run: that work is spent to save the wall time of the common case, where everything passes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextvars import copy_context

from libs.sandbox.command_start import telling
from libs.workspace.command_lanes import Gate, behind
from services.validator.checks import CheckResult, skipped

Step = tuple[str, Callable[[], CheckResult]]

FIRST = "compiles"
LANES = (("targeted_tests", "tests"), ("evaluation",), ("invalid_values",))
"""Steps that may run beside the other lanes: none reads what another lane writes (each command's outputs go to
its own scratch path; the copy itself must not change, which the integrity check proves afterwards)."""


def run_steps(steps: Sequence[Step], checks: list[CheckResult], parallel: int = 1) -> None:
    """Append each step's result to ``checks`` in the order of ``steps``."""
    ahead = _lanes_ahead(steps, checks, parallel) if parallel >= 2 else {}
    for name, step in steps:
        if not all_passed(checks):
            checks.append(skipped(name, first_failure(checks)))
        else:
            checks.append(ahead[name] if name in ahead else step())


def _lanes_ahead(steps: Sequence[Step], checks: list[CheckResult], parallel: int) -> dict[str, CheckResult]:
    """``compiles`` and, when it passed, every lane's results, up to ``parallel`` lanes at once. The lanes are started
    once ``compiles``' command has begun (their threads started before it made its preparation wait for the
    interpreter's lock) and prepare their first commands while it runs; their commands wait behind its gate
    (``libs.workspace.command_lanes.behind``) and run only once it passed, so none runs when it failed (what those
    lanes found is dropped)."""
    by_name = dict(steps)
    if FIRST not in by_name or not all_passed(checks):
        return {}
    lanes = [[name for name in lane if name in by_name] for lane in LANES]
    contexts = [copy_context() for _ in lanes]  # each lane in a copy of this thread's: its spans keep the incident's
    compiled = Gate(FIRST)
    results: dict[str, CheckResult] = {}
    with ThreadPoolExecutor(min(parallel, len(lanes)), thread_name_prefix="validation-lane") as pool:
        running: list[Future[dict[str, CheckResult]]] = []

        def start_lanes() -> None:
            if not running:
                running.extend(
                    pool.submit(context.run, _lane_behind, compiled, lane, by_name)
                    for context, lane in zip(contexts, lanes, strict=True)
                )

        try:
            with telling(start_lanes):
                results[FIRST] = by_name[FIRST]()
        finally:
            passed = FIRST in results and results[FIRST].passed
            if passed:
                compiled.open()
            else:
                compiled.withdraw()
        if not passed:
            wait(running)  # their commands were withdrawn before running; what they found is not reported
            return results
        start_lanes()  # compiles ran no command (no Python file changed)
        for lane_results in running:
            results.update(lane_results.result())
    return results


def _lane_behind(
    gate: Gate, names: Sequence[str], by_name: dict[str, Callable[[], CheckResult]]
) -> dict[str, CheckResult]:
    with behind(gate):
        return _lane(names, by_name)


def _lane(names: Sequence[str], by_name: dict[str, Callable[[], CheckResult]]) -> dict[str, CheckResult]:
    results: dict[str, CheckResult] = {}
    for name in names:
        results[name] = by_name[name]()
        if not results[name].passed:
            break
    return results


def all_passed(checks: list[CheckResult]) -> bool:
    return all(check.passed for check in checks)


def first_failure(checks: list[CheckResult]) -> str:
    failed = next((check for check in checks if not check.passed), None)
    return f"{failed.name} did not pass" if failed else "an earlier step did not pass"
