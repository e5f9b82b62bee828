"""The allow-list of programs and the resource limits handed to the kernel."""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import pytest

from libs.policy.sandbox import SandboxLimits
from libs.sandbox.process import CommandNotAllowed, resolve_program, resource_limits, session_group_nice


@pytest.mark.parametrize(
    "argv",
    [[], ["bash", "-c", "id"], ["sh", "-c", "python -V"], [sys.executable, "-V"], ["python3", "-V"], ["python -V"]],
)
def test_only_the_allow_listed_interpreter_runs(argv: list[str]) -> None:
    with pytest.raises(CommandNotAllowed, match="only \\['python'\\] may run"):
        resolve_program(argv)


def test_python_is_modelguards_own_interpreter() -> None:
    assert resolve_program(["python", "-m", "pytest"]) == [sys.executable, "-m", "pytest"]


def test_limits_become_kernel_resource_limits() -> None:
    limits = SandboxLimits(cpu_s=2.5, memory_bytes=512 * 1024**2, file_size_bytes=1024**2)
    pairs = dict(resource_limits(limits))
    assert pairs[resource.RLIMIT_CORE] == 0
    assert pairs[resource.RLIMIT_CPU] == 3
    assert pairs[resource.RLIMIT_AS] == 512 * 1024**2
    assert pairs[resource.RLIMIT_FSIZE] == 1024**2
    assert pairs[resource.RLIMIT_NICE] == 0, "a non-root command cannot raise its priority back"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("/autogroup-26904 nice 0\n", 0),
        ("/autogroup-7 nice -5\n", -5),
        ("/autogroup-7 nice 19\n", 19),
        # the kernel prints nothing for a process whose session has no group of its own (in a container's cgroup)
        ("", None),
        ("\n", None),
        ("/autogroup-7 nice\n", None),
    ],
)
def test_a_session_groups_niceness_is_read_or_none(tmp_path: Path, content: str, expected: int | None) -> None:
    group = tmp_path / "autogroup"
    group.write_text(content, encoding="ascii")
    assert session_group_nice(str(group)) == expected


def test_no_session_group_file_means_no_niceness(tmp_path: Path) -> None:
    assert session_group_nice(str(tmp_path / "absent")) is None
