"""What the sandbox enforced for one command and what it saw, in words a reviewer can check: the mechanism,
who the command ran as, each limit and what enforced it (or that nothing could here), what was hidden,
which arguments it refused, what the command wrote."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from libs.policy.sandbox import SandboxLimits
from libs.sandbox.control_groups import CommandCgroup
from libs.sandbox.integrity import TreeChanges
from libs.sandbox.process import LimitName
from libs.sandbox.verdict import limit_text

LISTED = 5


@dataclass(frozen=True)
class SandboxReport:
    mechanism: str
    """``bwrap`` or ``none`` (unconfined, only when the policy allows it)."""
    network_isolation: str
    filesystem_isolation: str
    process_limit: str
    limits: SandboxLimits
    limit_exceeded: LimitName | None
    ending: str
    cpu_s: float | None
    """CPU seconds of every process of the command (a cgroup's count), or of those the wrapper waited for;
    None when neither is measurable."""
    max_rss_bytes: int | None
    workspace_changes: TreeChanges = field(default_factory=TreeChanges)
    scratch_writes: tuple[str, ...] = ()
    """Files the command left in its scratch HOME and TMPDIR (allowed; discarded with the scratch folder)."""
    refused_outputs: tuple[str, ...] = ()
    identity: str = ""
    """The uid the command ran as, and how."""
    memory_limit: str = ""
    cpu_limit: str = ""
    processes_peak: int | None = None
    """The most processes and threads the command had at once (a pids cgroup's count)."""
    hidden: tuple[str, ...] = ()
    """Protected paths of this machine the command could not see (docs/sandbox.md)."""
    inputs: tuple[str, ...] = ()
    """Paths outside the working directory the command could read because its command line named them."""
    refused_inputs: tuple[str, ...] = ()
    outputs_written: tuple[str, ...] = ()
    outputs_not_copied: tuple[str, ...] = ()
    runner: str = ""
    """Where the command ran: empty for this process's own sandbox, else the workspace runner's address (the
    caller's configuration, never taken from the runner's answer; docs/deploy.md, "The workspace runner")."""

    def failure_reason(self, returncode: int) -> str | None:
        """Why the run failed: a limit or a non-zero exit, a changed workspace, an argument naming a protected
        path, an output the sandbox would not copy. Refused output folders are said along with any of these
        (a command that needed one fails by itself; one that did not is not failed for it)."""
        reasons = []
        if self.limit_exceeded is not None:
            reasons.append(f"{limit_text(self.limit_exceeded, self.limits)} ({self.ending})")
        elif returncode != 0:
            reasons.append(self.ending)
        if not self.workspace_changes.unchanged:
            reasons.append(f"the command changed its workspace: {self.workspace_changes.summary()}")
        reasons += _listed("the sandbox did not show these arguments", self.refused_inputs)
        reasons += _listed("the sandbox did not copy these outputs", self.outputs_not_copied)
        if reasons:
            reasons += _listed("the sandbox did not make these output folders writable", self.refused_outputs)
        return "; ".join(reasons) or None

    def as_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["limits"] = self.limits.model_dump()
        values["workspace_changes"] = self.workspace_changes.as_dict()
        return {name: list(value) if isinstance(value, tuple) else value for name, value in values.items()}


def _listed(label: str, items: tuple[str, ...]) -> list[str]:
    if not items:
        return []
    more = f" and {len(items) - LISTED} more" if len(items) > LISTED else ""
    return [f"{label}: {'; '.join(items[:LISTED])}{more}"]


def process_limit_text(cgroup: CommandCgroup, limits: SandboxLimits, uid: int, process_cap: int | None) -> str:
    if cgroup.enforces("pids"):
        return f"enforced ({cgroup.describe('pids')}: {limits.max_processes} processes and threads together)"
    if process_cap is not None:
        return (
            f"enforced (RLIMIT_NPROC of uid {uid}: {process_cap} processes of that uid on the machine, "
            f"{limits.max_processes} more than it ran before; {cgroup.describe('pids')})"
        )
    return f"not enforced ({cgroup.describe('pids')}; the kernel exempts uid {uid} from RLIMIT_NPROC)"


def memory_limit_text(cgroup: CommandCgroup, limits: SandboxLimits) -> str:
    per_process = f"RLIMIT_AS {limits.memory_bytes} bytes per process"
    if cgroup.enforces("memory"):
        return f"enforced ({cgroup.describe('memory')}: {limits.memory_bytes} bytes together; {per_process})"
    return f"per process only ({per_process}; {cgroup.describe('memory')}): processes together may use more"


def cpu_limit_text(cgroup: CommandCgroup, limits: SandboxLimits) -> str:
    per_process = f"RLIMIT_CPU {limits.cpu_s:g} s per process"
    if cgroup.enforces("cpu"):
        return f"enforced ({cgroup.describe('cpu')} accounting: {limits.cpu_s:g} s together; {per_process})"
    return f"per process only ({per_process}; {cgroup.describe('cpu')}): processes together may use more"
