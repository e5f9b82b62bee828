"""The central policy's ``sandbox`` section: resource limits for one workspace command and how strictly to
isolate it (read by ``libs.sandbox.limits``; docs/sandbox.md). A workspace's own ``timeout_s`` may narrow the
wall-time limit, never widen it; a key the sandbox does not read is refused.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MIB = 1024 * 1024
GIB = 1024 * MIB

IsolationMode = Literal["auto", "bwrap", "none"]
NOBODY = 65534


class SandboxLimits(BaseModel):
    """Limits of one command (and every process it starts, where the kernel counts them together)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_s: float = Field(
        default=600, gt=0, description="CPU seconds: per process (RLIMIT_CPU) and, with a cgroup, all together"
    )
    memory_bytes: int = Field(
        default=4 * GIB, gt=0, description="address space per process (RLIMIT_AS) and, with a cgroup, all together"
    )
    wall_s: float = Field(default=900, gt=0, description="wall-clock seconds of the whole command")
    output_bytes: int = Field(default=16 * MIB, gt=0, description="stdout and stderr together")
    file_size_bytes: int = Field(default=1 * GIB, gt=0, description="largest file a process may write")
    max_processes: int = Field(
        default=256,
        gt=0,
        description="processes and threads together (pids cgroup, else RLIMIT_NPROC of a non-root uid)",
    )
    nice: int = Field(
        default=10,
        ge=0,
        le=19,
        description="how far below ModelGuard's own scheduling priority the command runs (added to its niceness, "
        "which it cannot lower again): a busy or hostile workspace cannot starve the services that watch it",
    )

    def narrowed(self, *, wall_s: float | None = None) -> SandboxLimits:
        """These limits with the wall time lowered to ``wall_s`` when that is stricter."""
        if wall_s is None or wall_s >= self.wall_s:
            return self
        return self.model_copy(update={"wall_s": float(wall_s)})


class SandboxPolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    limits: SandboxLimits = SandboxLimits()
    isolation: IsolationMode = Field(
        default="auto",
        description="auto or bwrap: bubblewrap, the only mechanism that can hide ModelGuard's files; "
        "none: run unconfined (refused unless allow_unconfined)",
    )
    allow_unconfined: bool = Field(
        default=False,
        description="local development only: run workspace code without a sandbox when bubblewrap is "
        "missing or cannot start (every result then says mechanism none)",
    )
    hidden: tuple[str, ...] = Field(
        default=(),
        description="more absolute paths no workspace command may read, on top of ModelGuard's keys, state "
        "and the system's credentials (docs/sandbox.md)",
    )
    run_as_uid: int = Field(
        default=NOBODY, gt=0, description="the uid a command runs as when ModelGuard runs as root (never 0)"
    )
    run_as_gid: int = Field(default=NOBODY, gt=0, description="its gid")
    read_only_workspace: Literal[True] = Field(
        default=True, description="the command's working directory (the revision) is always read-only"
    )

    @field_validator("hidden")
    @classmethod
    def _absolute(cls, paths: tuple[str, ...]) -> tuple[str, ...]:
        for path in paths:
            if not path.startswith("/"):
                raise ValueError(f"{path!r} is not an absolute path")
        return paths
