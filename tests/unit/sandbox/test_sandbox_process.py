"""The allow-list of programs and the resource limits handed to the kernel."""

from __future__ import annotations

import resource
import sys

import pytest

from libs.policy.sandbox import SandboxLimits
from libs.sandbox.process import CommandNotAllowed, resolve_program, resource_limits


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
