"""The report's failure reason and the words for what enforced each limit."""

from __future__ import annotations

from pathlib import Path

from libs.policy.sandbox import SandboxLimits
from libs.sandbox.control_groups import CommandCgroup, Hierarchy
from libs.sandbox.report import SandboxReport, memory_limit_text, process_limit_text

LIMITS = SandboxLimits(max_processes=256, memory_bytes=1024)


def report(**fields: object) -> SandboxReport:
    base: dict[str, object] = {
        "mechanism": "bwrap",
        "network_isolation": "enforced",
        "filesystem_isolation": "enforced",
        "process_limit": "enforced",
        "limits": LIMITS,
        "limit_exceeded": None,
        "ending": "exit 0",
        "cpu_s": None,
        "max_rss_bytes": None,
    }
    return SandboxReport(**{**base, **fields})  # type: ignore[arg-type]


def test_a_refused_argument_fails_the_run_even_when_the_command_succeeded() -> None:
    reason = report(refused_inputs=("/k/a.key: inside the protected /k",)).failure_reason(0)
    assert reason == "the sandbox did not show these arguments: /k/a.key: inside the protected /k"


def test_a_refused_output_folder_is_said_only_along_with_a_failure() -> None:
    refused = ("/work: the working directory is read-only",)
    assert report(refused_outputs=refused).failure_reason(0) is None
    assert report(refused_outputs=refused, ending="exit 1").failure_reason(1) == (
        "exit 1; the sandbox did not make these output folders writable: /work: the working directory is read-only"
    )


def test_a_limit_comes_first_with_how_the_command_ended() -> None:
    reason = report(limit_exceeded="processes", ending="exit 0").failure_reason(0)
    assert reason == "exceeded the process limit of 256 processes (exit 0)"


def test_the_words_say_which_mechanism_enforced_each_limit_or_that_none_could() -> None:
    with_cgroup = CommandCgroup(
        {"pids": Path("/x"), "memory": Path("/x")},
        {"pids": Hierarchy(1, Path("/p"), "/"), "memory": Hierarchy(2, Path("/u"), "/")},
    )
    assert process_limit_text(with_cgroup, LIMITS, 65534, None) == (
        "enforced (cgroup v1 pids: 256 processes and threads together)"
    )
    assert memory_limit_text(with_cgroup, LIMITS).startswith("enforced (cgroup v2 memory: 1024 bytes together")
    without = CommandCgroup({}, {}, {"pids": "no cgroup hierarchy with the pids controller"})
    assert process_limit_text(without, LIMITS, 0, None).startswith("not enforced (no cgroup hierarchy")
    assert process_limit_text(without, LIMITS, 65534, 300).startswith("enforced (RLIMIT_NPROC of uid 65534: 300")
    assert memory_limit_text(without, LIMITS).startswith("per process only (RLIMIT_AS 1024 bytes per process")
