"""One workspace command in the sandbox: allow-listed program, scratch HOME and TMPDIR, environment from
nothing, isolation as the machine allows, resource limits, and every file of the working directory hashed
before and after."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from libs.sandbox.arguments import covers, declared_paths
from libs.sandbox.confinement import SHARED_TEMPORARY, Confinement, interpreter_paths, modelguard_private_paths, wrap
from libs.sandbox.environment import sandbox_environment
from libs.sandbox.integrity import TreeChanges, compare_trees, hash_tree
from libs.sandbox.isolation import Isolation, probe_isolation
from libs.sandbox.limits import SandboxLimits, SandboxPolicy
from libs.sandbox.process import LimitName, process_limit_enforced, resolve_program, run_limited
from libs.sandbox.verdict import ending_text, exceeded_limit, limit_text


@dataclass(frozen=True)
class SandboxReport:
    """What the sandbox enforced for one command and what it saw."""

    mechanism: str
    network_isolation: str
    filesystem_isolation: str
    process_limit: str
    limits: SandboxLimits
    limit_exceeded: LimitName | None
    ending: str
    cpu_s: float | None
    """CPU seconds of the command and its descendants; None where the wrapper hides them (bubblewrap)."""
    max_rss_bytes: int | None
    workspace_changes: TreeChanges = field(default_factory=TreeChanges)
    scratch_writes: tuple[str, ...] = ()
    """Files the command left in its scratch HOME and TMPDIR (allowed; discarded with the scratch folder)."""
    refused_outputs: tuple[str, ...] = ()

    def failure_reason(self, returncode: int) -> str | None:
        reasons = []
        if self.limit_exceeded is not None:
            reasons.append(f"{limit_text(self.limit_exceeded, self.limits)} ({self.ending})")
        elif returncode != 0:
            reasons.append(self.ending)
        if not self.workspace_changes.unchanged:
            reasons.append(f"the command changed its workspace: {self.workspace_changes.summary()}")
        return "; ".join(reasons) or None

    def as_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["limits"] = self.limits.model_dump()
        values["workspace_changes"] = self.workspace_changes.as_dict()
        values["scratch_writes"] = list(self.scratch_writes)
        values["refused_outputs"] = list(self.refused_outputs)
        return values


@dataclass(frozen=True)
class SandboxResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    report: SandboxReport

    @property
    def failure_reason(self) -> str | None:
        return self.report.failure_reason(self.returncode)

    @property
    def failed(self) -> bool:
        return self.failure_reason is not None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _scratch_files(scratch: Path) -> tuple[str, ...]:
    return tuple(
        sorted(
            (Path(folder) / name).relative_to(scratch).as_posix()
            for folder, _, names in os.walk(scratch)
            for name in names
        )
    )


def _process_limit_text(limits: SandboxLimits) -> str:
    if process_limit_enforced():
        return f"enforced (RLIMIT_NPROC: {limits.max_processes} more than the user runs)"
    return "not enforced (the kernel exempts root from RLIMIT_NPROC)"


def run_sandboxed(
    argv: Sequence[str],
    cwd: Path,
    policy: SandboxPolicy,
    *,
    isolation: Isolation | None = None,
) -> SandboxResult:
    """Run ``argv`` (``python ...``) in ``cwd``. Arguments naming paths that do not exist yet, or following
    ``--output``/``--junitxml``, are outputs whose folder becomes writable; other absolute paths stay
    readable. A non-zero exit, a limit or a change to ``cwd`` make the result ``failed``; nothing raises
    except a refused program (CommandNotAllowed) or a program that cannot start (OSError)."""
    command = resolve_program(argv)
    isolation = isolation or probe_isolation(policy.isolation)
    cwd = Path(cwd).resolve()
    hidden = modelguard_private_paths()
    protected = [*hidden, *SHARED_TEMPORARY]
    declared = declared_paths(argv[1:], [cwd, *protected, *interpreter_paths()])
    parent = [cwd.parent] if not any(covers(cwd.parent, path.resolve()) for path in protected) else []
    with tempfile.TemporaryDirectory(prefix="modelguard-run-") as folder:
        scratch = Path(folder)
        home, tmpdir = scratch / "home", scratch / "tmp"
        home.mkdir()
        tmpdir.mkdir()
        confinement = Confinement(
            cwd=cwd,
            scratch=scratch,
            outputs=declared.outputs,
            inputs=(*declared.inputs, *parent),
            hidden=hidden,
            read_only_cwd=policy.read_only_workspace,
        )
        before = hash_tree(cwd)
        outcome = run_limited(
            wrap(isolation, confinement, command),
            cwd=cwd,
            env=sandbox_environment(home, tmpdir),
            limits=policy.limits,
        )
        changes = compare_trees(before, hash_tree(cwd))
        scratch_writes = _scratch_files(scratch)
    wrapped = isolation.mechanism != "none"
    report = SandboxReport(
        mechanism=isolation.mechanism,
        network_isolation=isolation.network_status(),
        filesystem_isolation=isolation.filesystem_status(),
        process_limit=_process_limit_text(policy.limits),
        limits=policy.limits,
        limit_exceeded=exceeded_limit(outcome, policy.limits, wrapped=wrapped),
        ending=ending_text(outcome.returncode, wrapped),
        cpu_s=None if isolation.mechanism == "bwrap" else outcome.cpu_s,
        max_rss_bytes=None if isolation.mechanism == "bwrap" else outcome.max_rss_bytes,
        workspace_changes=changes,
        scratch_writes=scratch_writes,
        refused_outputs=tuple(str(path) for path in declared.refused_outputs),
    )
    return SandboxResult(
        argv=list(argv),
        returncode=outcome.returncode,
        stdout=_decode(outcome.stdout),
        stderr=_decode(outcome.stderr),
        duration_s=outcome.duration_s,
        report=report,
    )
