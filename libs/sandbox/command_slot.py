"""Where one command runs: a fresh cgroup (where one can be made) and a held shell already moving into it
(``libs/sandbox/process.py``), made before the command is known; ``run`` lets the command go as that shell under the
policy's limits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from libs.policy.sandbox import SandboxLimits
from libs.sandbox.control_groups import CgroupUsage, CommandCgroup, create_command_cgroup
from libs.sandbox.process import (
    Held,
    ProcessOutcome,
    hold,
    process_limit_binds,
    release,
    resource_limits,
    run_held,
    tasks_of_user,
)

SlotShape = tuple[int, int]
"""What a slot's cgroup enforces from the start: (max_processes, memory_bytes)."""


@dataclass(frozen=True)
class SlotRun:
    outcome: ProcessOutcome
    usage: CgroupUsage
    cgroup: CommandCgroup
    process_cap: int | None


def shape_of(limits: SandboxLimits) -> SlotShape:
    return (limits.max_processes, limits.memory_bytes)


class CommandSlot:
    def __init__(self, shape: SlotShape, cwd: Path, env: dict[str, str]) -> None:
        """``cwd`` and ``env``: the held shell's (bubblewrap sets the command's own from its arguments)."""
        self.shape = shape
        self._in_use: Callable[[], None] | None = None
        self.cgroup = create_command_cgroup(*shape)
        try:
            self.held: Held = hold(cwd=cwd, env=env, cgroup_procs=self.cgroup.join_descriptors())
        except BaseException:
            self.cgroup.remove()
            raise

    def when_in_use(self, then: Callable[[], None]) -> None:
        """Call ``then`` once the slot is used up: its command let go, or the slot closed without one (refused
        before it ran)."""
        self._in_use = then

    def _used(self) -> None:
        then, self._in_use = self._in_use, None
        if then is not None:
            then()

    def usable(self) -> bool:
        """Its shell still waits and nothing refused to move it (a spare may have waited a long time)."""
        return self.held.process.poll() is None and not self.held.refusals

    def run(self, command: list[str], limits: SandboxLimits, uid: int) -> SlotRun:
        """``command`` as the held shell, under ``limits`` (whose shape must be the slot's), as ``uid``."""
        if shape_of(limits) != self.shape:
            raise ValueError(f"a slot made for {self.shape} cannot run under {shape_of(limits)}")
        process_cap = None
        if not self.cgroup.enforces("pids") and process_limit_binds(uid):
            process_cap = tasks_of_user(uid) + limits.max_processes
        cpu_used = self.cgroup.cpu_s if self.cgroup.enforces("cpu") else None
        pairs = resource_limits(limits, process_cap)
        outcome = run_held(self.held, command, limits=limits, pairs=pairs, cpu_used=cpu_used, once_let_go=self._used)
        return SlotRun(outcome, self.cgroup.usage(), self.cgroup, process_cap)

    def close(self) -> None:
        """Kill a shell never let go, remove its command file and the cgroup (killing whatever is left in it)."""
        try:
            release(self.held)
        finally:
            try:
                self.cgroup.remove()
            finally:
                self._used()
