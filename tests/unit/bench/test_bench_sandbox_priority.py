"""The sandbox-priority bench reports a share only beside commands that really kept their cores busy."""

from __future__ import annotations

from libs.policy.sandbox import SandboxLimits
from libs.sandbox.process import LimitName
from libs.sandbox.report import SandboxReport
from libs.sandbox.run import SandboxResult
from modelguard.bench_sandbox_priority import busy_throughout


def result(limit: LimitName | None, cpu_s: float | None, returncode: int = -9) -> SandboxResult:
    report = SandboxReport(
        mechanism="bwrap",
        network_isolation="namespace",
        filesystem_isolation="bwrap",
        process_limit="cgroup",
        limits=SandboxLimits(),
        limit_exceeded=limit,
        ending="killed",
        cpu_s=cpu_s,
        max_rss_bytes=None,
    )
    return SandboxResult(["python", "run.py"], returncode, "", "", 3.5, report)


def test_commands_busy_until_their_wall_limit_count() -> None:
    assert busy_throughout([result("wall_time", 1.6)] * 4, 4, 2.0) is None


def test_a_missing_command_an_early_end_or_too_little_cpu_does_not_count() -> None:
    assert busy_throughout([result("wall_time", 2.0)] * 3, 4, 2.0) == "1 of the 4 sandboxed commands did not finish"
    early = busy_throughout([result("wall_time", 2.0), result(None, 0.1, returncode=1)], 2, 2.0)
    assert early is not None and early.startswith("a sandboxed command ended before its wall limit")
    assert busy_throughout([result("wall_time", 0.4), result("wall_time", None)], 2, 2.0) == (
        "the sandboxed commands used 0.40 CPU-s in all, less than the 2 s measured"
    )
