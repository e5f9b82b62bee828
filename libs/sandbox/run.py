"""One workspace command in the sandbox: allow-listed program, environment from nothing, bubblewrap's view of
the file system (only the system, the interpreter, the working directory and the command's inputs; writable
only its scratch and output folders; ModelGuard's keys, state and the machine's credentials hidden), an
unprivileged uid, a cgroup for processes, memory and CPU where the machine has one, resource limits, and
every file of the working directory hashed before and after.

Fails closed: without bubblewrap no command runs (SandboxUnavailable), unless the central policy allows
unconfined runs for local development (``sandbox.allow_unconfined``); such a run reports mechanism ``none``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from libs.policy.sandbox import SandboxPolicy
from libs.sandbox.arguments import DeclaredPaths, declared_paths
from libs.sandbox.command_slot import CommandSlot, SlotRun, shape_of
from libs.sandbox.confinement import SYSTEM_FOLDERS, Identity, Mount, View, bwrap_argv, interpreter_paths
from libs.sandbox.environment import sandbox_environment
from libs.sandbox.folder_removal import remove_later
from libs.sandbox.integrity import compare_trees, hash_tree
from libs.sandbox.isolation import Isolation, SandboxUnavailable, probe_isolation
from libs.sandbox.known_digests import LOCAL_TREES
from libs.sandbox.process import CommandNotAllowed, ProcessOutcome, resolve_program
from libs.sandbox.protected_paths import ProtectedPaths, protected_paths
from libs.sandbox.report import SandboxReport, cpu_limit_text, memory_limit_text, process_limit_text
from libs.sandbox.spare_slots import take_slot
from libs.sandbox.staging import CollectedOutputs, Staging
from libs.sandbox.verdict import ending_text, exceeded_limit
from libs.sandbox.workspace_interpreter import WorkspaceInterpreter, checked

__all__ = [
    "PreparedCommand",
    "SandboxReport",
    "SandboxResult",
    "SandboxUnavailable",
    "prepared_command",
    "require_sandbox",
    "run_sandboxed",
]


@dataclass(frozen=True)
class SandboxResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    report: SandboxReport
    ran: tuple[float, float] | None = None
    """When the command itself ran, from being let go to being reaped (seconds since the epoch); None where the
    sandbox did not say (the workspace runner, a Kubernetes Job)."""

    @property
    def failure_reason(self) -> str | None:
        return self.report.failure_reason(self.returncode)

    @property
    def failed(self) -> bool:
        return self.failure_reason is not None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def require_sandbox(policy: SandboxPolicy) -> Isolation:
    """The isolation commands will run under; raises SandboxUnavailable (one line: why, and how to install
    bubblewrap) when there is none and the policy does not allow unconfined runs. For a service or the CLI to
    call once at start, so that a machine without bubblewrap refuses before doing any work."""
    isolation = probe_isolation(policy.isolation, uid=policy.run_as_uid, gid=policy.run_as_gid)
    if isolation.mechanism == "none" and not policy.allow_unconfined:
        raise SandboxUnavailable(isolation.refusal())
    return isolation


def _system_folders() -> list[Path]:
    return [Path(name) for name in SYSTEM_FOLDERS if Path(name).is_dir() and not Path(name).is_symlink()]


def _view(
    cwd: Path,
    declared: DeclaredPaths,
    protected: ProtectedPaths,
    staging: Staging,
    environment: WorkspaceInterpreter | None,
    scratch: tuple[Path, Path],
) -> View:
    home, tmpdir = scratch
    return View(
        cwd=staging.readable(cwd),
        readable=(
            *(Mount(path, path) for path in interpreter_paths(environment)),
            *(staging.readable(path) for path in declared.inputs),
        ),
        writable=(
            Mount(home, home),
            Mount(tmpdir, tmpdir),
            *(staging.output_folder(folder) for folder in declared.outputs),
        ),
        protected=protected.everything,
    )


def _report(
    isolation: Isolation,
    policy: SandboxPolicy,
    ran: SlotRun,
    identity: Identity | None,
    **seen: object,
) -> SandboxReport:
    wrapped = isolation.mechanism != "none"
    outcome, usage, cgroup = ran.outcome, ran.usage, ran.cgroup
    uid = identity.uid if identity is not None else os.getuid()
    in_force = cgroup.enforces("pids") or ran.process_cap is not None
    cpu_s, rss = usage.cpu_s, usage.memory_peak_bytes
    if not wrapped:  # the kernel's count of the processes ModelGuard waited for, when no cgroup counted
        cpu_s = outcome.cpu_s if cpu_s is None else cpu_s
        rss = outcome.max_rss_bytes if rss is None else rss
    return SandboxReport(
        mechanism=isolation.mechanism,
        network_isolation=isolation.network_status(),
        filesystem_isolation=isolation.filesystem_status(),
        process_limit=process_limit_text(cgroup, policy.limits, uid, ran.process_cap),
        limits=policy.limits,
        limit_exceeded=exceeded_limit(
            outcome, policy.limits, wrapped=wrapped, usage=usage, process_limit_in_force=in_force
        ),
        ending=ending_text(outcome.returncode, wrapped),
        cpu_s=None if cpu_s is None else round(cpu_s, 3),
        max_rss_bytes=rss,
        identity=identity.describe() if identity is not None else f"uid {uid}: ModelGuard's own, unconfined",
        memory_limit=memory_limit_text(cgroup, policy.limits),
        cpu_limit=cpu_limit_text(cgroup, policy.limits),
        processes_peak=usage.processes_peak,
        **seen,  # type: ignore[arg-type]
    )


@contextlib.contextmanager
def _staging_folder() -> Iterator[Path]:
    """A fresh private folder for one command's scratch, outputs and copies, removed off its path once it is done
    (``folder_removal``)."""
    folder = tempfile.TemporaryDirectory(prefix="modelguard-run-")
    try:
        yield Path(folder.name)
    finally:
        remove_later(folder)


def _mounted_targets(view: View) -> list[Path]:
    return [mount.target for mount in (view.cwd, *view.readable, *view.writable)]


def run_sandboxed(
    argv: Sequence[str],
    cwd: Path,
    policy: SandboxPolicy,
    *,
    isolation: Isolation | None = None,
    protected: ProtectedPaths | None = None,
    environment: WorkspaceInterpreter | None = None,
) -> SandboxResult:
    """Run ``argv`` (``python ...``) in ``cwd``. Existing absolute paths among the arguments are inputs (made
    readable); paths that do not exist yet, or follow ``--output``/``--junitxml``, are outputs (their folder
    made writable). A non-zero exit, a limit, a change to ``cwd`` or a refused argument make the result
    ``failed``. ``environment``: the workspace's own built environment, whose ``python`` runs instead of
    ModelGuard's and which is shown read-only instead of ModelGuard's environment. Raises CommandNotAllowed for a
    refused program or environment, SandboxUnavailable when no sandbox can run here and the policy does not allow
    unconfined runs, OSError when the program cannot start."""
    with prepared_command(
        argv, cwd, policy, isolation=isolation, protected=protected, environment=environment
    ) as command:
        return command.run()


def _nothing() -> None:
    return None


class PreparedCommand:
    """A command ``prepared_command`` checked and made ready: ``run`` runs it, once (its slot and its staging folder
    are its own)."""

    def __init__(self, argv: Sequence[str], run: Callable[[Callable[[], None]], SandboxResult]) -> None:
        self.argv = list(argv)
        self._run = run
        self._ran = False

    def run(self, reaped: Callable[[], None] = _nothing) -> SandboxResult:
        """Run it: in bubblewrap, ``reaped`` is called as soon as its process is reaped, before its tree and
        outputs are checked (a caller waiting for its turn gives the turn back there)."""
        if self._ran:
            raise RuntimeError(f"{' '.join(self.argv)[:80]} was prepared to run once and has run")
        self._ran = True
        return self._run(reaped)


@contextlib.contextmanager
def prepared_command(
    argv: Sequence[str],
    cwd: Path,
    policy: SandboxPolicy,
    *,
    isolation: Isolation | None = None,
    protected: ProtectedPaths | None = None,
    environment: WorkspaceInterpreter | None = None,
) -> Iterator[PreparedCommand]:
    """``run_sandboxed`` in two steps. On entry the command is checked and made ready: its program resolved, its
    arguments' paths declared, its view, its slot and its environment made, and in bubblewrap its working tree
    hashed (bubblewrap shows the tree read-only, so nothing can change it before the command runs: a change found
    after it, whoever made it, fails the command all the same). ``PreparedCommand.run`` then lets it go, reaps it,
    hashes the tree again and collects its outputs. So a caller that must wait for its turn
    (``libs/workspace/command_lanes.py``) prepares while it waits, and its turn holds only the command's process. A
    refusal is raised on entry, before anything has run; the slot of a command never run is closed when the block
    ends."""
    environment = checked(environment) if environment is not None else None
    command = resolve_program(argv, environment.python if environment is not None else None)
    if isolation is None:
        isolation = probe_isolation(policy.isolation, uid=policy.run_as_uid, gid=policy.run_as_gid)
    if isolation.mechanism == "none" and not policy.allow_unconfined:
        raise SandboxUnavailable(isolation.refusal())
    cwd = Path(os.path.realpath(cwd))
    if isolation.mechanism == "none":
        # the policy allows it: all of it happens when it runs, and its turn is given back when the caller's ends
        yield PreparedCommand(argv, partial(_unconfined, list(argv), command, cwd, policy, isolation, environment))
        return
    identity = isolation.identity(policy.run_as_uid, policy.run_as_gid)
    with _staging_folder() as folder:
        staging = Staging(folder, identity)
        home, tmpdir = staging.scratch()
        # the held shell was moved into its cgroups ahead (spare_slots), or is moved while the command is checked
        # and its view prepared; a refusal, or a command never run, kills it before it has run anything
        with contextlib.ExitStack() as slot_held:
            slot = take_slot(shape_of(policy.limits))
            slot_held.callback(slot.close)
            protected = protected or protected_paths(policy.hidden)
            secret = protected.secret_holding(cwd)
            if secret is not None:
                raise CommandNotAllowed(f"refused to run in {cwd}: it lies inside the protected {secret}")
            fixed = [*_system_folders(), *interpreter_paths(environment)]
            declared = declared_paths(argv[1:], protected, cwd=cwd, fixed=fixed)
            view = _view(cwd, declared, protected, staging, environment, (home, tmpdir))
            env = sandbox_environment(home, tmpdir, environment)
            wrapped = bwrap_argv(str(isolation.program), view, identity, command, env)
            hidden = protected.everything
            before = hash_tree(cwd, LOCAL_TREES)  # read-only to the command: a file it saw unchanged is not read

            def run(reaped: Callable[[], None]) -> SandboxResult:
                ran = slot.run(wrapped, policy.limits, identity.uid)
                reaped()
                slot_held.close()  # what the command left running is killed before its tree and outputs are read
                changes = compare_trees(before, hash_tree(cwd, LOCAL_TREES))
                collected: CollectedOutputs = staging.collect_outputs(declared.output_files, _mounted_targets(view))
                report = _report(
                    isolation,
                    policy,
                    ran,
                    identity,
                    workspace_changes=changes,
                    scratch_writes=staging.scratch_files(),
                    refused_outputs=declared.refused_outputs,
                    hidden=tuple(sorted(str(path) for path in hidden if os.path.lexists(path))),
                    inputs=tuple(str(path) for path in declared.inputs),
                    refused_inputs=declared.refused_inputs,
                    outputs_written=collected.written,
                    outputs_not_copied=collected.refused,
                )
                return _result(argv, ran.outcome, report)

            yield PreparedCommand(argv, run)


def _unconfined(
    argv: list[str],
    command: list[str],
    cwd: Path,
    policy: SandboxPolicy,
    isolation: Isolation,
    environment: WorkspaceInterpreter | None,
    _reaped: Callable[[], None],
) -> SandboxResult:
    """``PreparedCommand``'s run where nothing was prepared ahead."""
    return _run_unconfined(argv, command, cwd, policy, isolation, environment)


def _run_unconfined(
    argv: list[str],
    command: list[str],
    cwd: Path,
    policy: SandboxPolicy,
    isolation: Isolation,
    environment: WorkspaceInterpreter | None,
) -> SandboxResult:
    """The policy allows unconfined runs and no sandbox works: environment, limits and hashing only."""
    with _staging_folder() as folder:
        staging = Staging(folder, Identity(os.getuid(), os.getgid(), drop_from_root=False))
        home, tmpdir = staging.scratch()
        env = sandbox_environment(home, tmpdir, environment)
        with contextlib.closing(CommandSlot(shape_of(policy.limits), cwd, env)) as slot:
            before = hash_tree(cwd)
            ran = slot.run(command, policy.limits, os.getuid())
        changes = compare_trees(before, hash_tree(cwd))
        scratch_writes = staging.scratch_files()
    report = _report(isolation, policy, ran, None, workspace_changes=changes, scratch_writes=scratch_writes)
    return _result(argv, ran.outcome, report)


def _result(argv: Sequence[str], outcome: ProcessOutcome, report: SandboxReport) -> SandboxResult:
    return SandboxResult(
        argv=list(argv),
        returncode=outcome.returncode,
        stdout=_decode(outcome.stdout),
        stderr=_decode(outcome.stderr),
        duration_s=outcome.duration_s,
        report=report,
        ran=None if outcome.let_go_at is None or outcome.reaped_at is None else (outcome.let_go_at, outcome.reaped_at),
    )
