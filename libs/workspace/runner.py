"""Run one workspace command in the sandbox (``libs.sandbox``): only the allow-listed Python, no shell, an
environment built from nothing, resource limits from the central policy's ``sandbox`` section, no network,
and a file system that shows only the system, the interpreter, the revision and the command's inputs.
A wall-time overrun raises CommandTimedOut. Where no sandbox can hide ModelGuard's keys, SandboxUnavailable
(a CommandNotAllowed) is raised before anything runs, unless the policy allows unconfined runs. Every other
failure (exit code, CPU, memory, process, output or file-size limit, a changed workspace, a refused
argument) is returned with its reason, which is also appended to ``stderr`` so that error messages built
from it carry it.

Where it runs: this process's own bubblewrap by default; with ``MODELGUARD_RUNNER`` set, the workspace runner
(``services/runner``) runs it and the result is the same (``libs.sandbox.remote.client``; its report's
``runner`` names the runner). The runner failing to answer in time is a CommandTimedOut; a runner that cannot
be reached, or an answer that does not pass the caller's checks, is a CommandNotAllowed with the reason.

Which Python: the environment the revision in ``cwd`` declares (``libs.workspace_env``), built or taken from the
cache, else ModelGuard's own. A refused declaration or a failed build raises EnvironmentUnavailable (a
CommandNotAllowed) before anything runs; so does a declaration with ``MODELGUARD_RUNNER`` set, since the
workspace runner does not build environments yet (docs/workspace-environments.md).

A model whose policy names its own image (``image``) runs instead as a Kubernetes Job in that image
(``libs.sandbox.job``, ``MODELGUARD_IMAGE_JOBS=kubernetes``), whatever the revision declares: the image is its
environment. An image the central policy's ``workspace_images`` does not allow, or no Job backend configured, is
EnvironmentUnavailable before anything is made."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from libs.observability.command_span import command_span, record_exit
from libs.policy.sandbox import SandboxPolicy
from libs.sandbox.job.backend import run_in_job
from libs.sandbox.job.image_policy import ImageRefused, check_image, default_image_policy, image_declaration
from libs.sandbox.job.kube_api import HttpxJobApi
from libs.sandbox.job.settings import load_image_job_settings
from libs.sandbox.limits import default_sandbox_policy
from libs.sandbox.process import CommandNotAllowed
from libs.sandbox.remote.client import run_remote, runner_readiness
from libs.sandbox.remote.protocol import RunnerTimedOut
from libs.sandbox.run import (
    SandboxReport,
    SandboxResult,
    SandboxUnavailable,
    prepared_command,
    require_sandbox,
    run_sandboxed,
)
from libs.settings import RunnerSettings, SettingsError, load_runner_settings
from libs.workspace.command_lanes import in_a_lane
from libs.workspace_env.failure import EnvironmentUnavailable
from libs.workspace_env.resolve import declared, workspace_interpreter

__all__ = [
    "CommandNotAllowed",
    "CommandResult",
    "CommandTimedOut",
    "EnvironmentUnavailable",
    "SandboxUnavailable",
    "require_workspace_sandbox",
    "run_command",
]

SANDBOX_NOTE = "[modelguard sandbox]"


class CommandTimedOut(TimeoutError):
    def __init__(
        self,
        argv: list[str],
        timeout_s: float,
        stdout: str,
        stderr: str,
        sandbox: SandboxReport | None = None,
        reason: str | None = None,
    ) -> None:
        self.argv = list(argv)
        self.timeout_s = timeout_s
        self.stdout = stdout
        self.stderr = stderr
        self.sandbox = sandbox
        self.reason = reason
        """Why, when the command's own wall time is not the whole story (a workspace runner that did not answer)."""
        super().__init__(f"{' '.join(argv)} did not finish within {timeout_s} s" + (f": {reason}" if reason else ""))


@dataclass(frozen=True)
class CommandResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    sandbox: SandboxReport | None = None
    ran: tuple[float, float] | None = None
    """When the command's own process ran, from being let go to being reaped (seconds since the epoch), where the
    sandbox measured it."""

    @property
    def failure_reason(self) -> str | None:
        if self.sandbox is not None:
            return self.sandbox.failure_reason(self.returncode)
        return None if self.returncode == 0 else f"exit {self.returncode}"

    @property
    def succeeded(self) -> bool:
        return self.returncode == 0 and self.failure_reason is None

    @property
    def limit_exceeded(self) -> str | None:
        return self.sandbox.limit_exceeded if self.sandbox is not None else None


def _with_note(result: SandboxResult) -> str:
    reason = result.failure_reason
    if reason is None:
        return result.stderr
    return f"{result.stderr.rstrip()}\n{SANDBOX_NOTE} {reason}\n".lstrip("\n")


def run_command(
    argv: list[str],
    cwd: Path,
    timeout_s: float,
    *,
    policy: SandboxPolicy | None = None,
    image: str | None = None,
) -> CommandResult:
    """Run ``argv`` in ``cwd`` within ``timeout_s`` (never longer than the policy's wall-time limit).
    ``policy`` defaults to the central policy's sandbox section; ``image``: the model's own image, from its
    policy's workspace section (never from the revision)."""
    policy = policy or default_sandbox_policy()
    policy = policy.model_copy(update={"limits": policy.limits.narrowed(wall_s=timeout_s)})
    runner = load_runner_settings()
    where = (runner.url or "local") if image is None else f"job:{image}"
    with (
        _ready(argv, Path(cwd), policy, runner, image) as run,
        in_a_lane() as give_back_lane,
        command_span(argv, Path(cwd), where) as span,
    ):
        result = run(give_back_lane)
        record_exit(span, result.returncode, result.failure_reason, result.report.cpu_s, result.ran)
    if result.report.limit_exceeded == "wall_time":
        raise CommandTimedOut(list(argv), policy.limits.wall_s, result.stdout, _with_note(result), result.report)
    return CommandResult(
        argv=list(argv),
        returncode=result.returncode,
        stdout=result.stdout,
        stderr=_with_note(result),
        duration_s=result.duration_s,
        sandbox=result.report,
        ran=result.ran,
    )


@contextmanager
def _ready(
    argv: list[str], cwd: Path, policy: SandboxPolicy, runner: RunnerSettings, image: str | None
) -> Iterator[Callable[[Callable[[], None]], SandboxResult]]:
    """The command made ready to run before it waits for its lane, and what runs it (given what to call once its
    process is reaped). In this process's bubblewrap with ModelGuard's own interpreter it is checked and its sandbox
    prepared ahead (``prepared_command``), and its lane holds only its process. Everywhere else (a declared
    environment, which may have to be built, the workspace runner, a Job) all of it happens in the lane, as the
    command's work."""
    if image is not None:
        yield lambda _: _run_in_image(argv, cwd, policy, image)
    elif runner.url is not None or declared(cwd) is not None:
        yield lambda _: _run(argv, cwd, policy, runner)
    else:
        with prepared_command(argv, cwd, policy) as command:
            yield command.run


def _run(argv: list[str], cwd: Path, policy: SandboxPolicy, runner: RunnerSettings) -> SandboxResult:
    """Here in bubblewrap, in the environment the revision declares, or on the workspace runner."""
    if runner.url is None:
        return run_sandboxed(argv, cwd, policy, environment=workspace_interpreter(cwd))
    declaration = declared(cwd)
    if declaration is not None:
        raise EnvironmentUnavailable(
            f"the revision declares its environment ({declaration.names}), and the workspace runner "
            f"({runner.url}) does not build workspace environments yet",
            declaration=declaration.names,
        )
    try:
        return run_remote(argv, cwd, policy, runner)
    except RunnerTimedOut as error:
        note = f"{SANDBOX_NOTE} {error}\n"
        raise CommandTimedOut(list(argv), policy.limits.wall_s, "", note, reason=str(error)) from error


def _run_in_image(argv: list[str], cwd: Path, policy: SandboxPolicy, image: str) -> SandboxResult:
    """As a Kubernetes Job in the model's own image, when the central policy allows the image and the Job backend
    is configured; EnvironmentUnavailable otherwise."""
    declaration = image_declaration(image)
    try:
        allowed = check_image(image, default_image_policy())
    except ImageRefused as error:
        raise EnvironmentUnavailable(str(error), declaration=declaration) from None
    try:
        settings = load_image_job_settings()
    except SettingsError as error:
        raise EnvironmentUnavailable(f"the Job backend is misconfigured: {error}", declaration=declaration) from None
    if not settings.enabled:
        raise EnvironmentUnavailable(
            f"the model's policy names the image {image[:200]}, and this deployment runs no workspace Jobs "
            "(MODELGUARD_IMAGE_JOBS is off)",
            declaration=declaration,
        )
    api = HttpxJobApi(settings.api_url, settings.token_file, settings.ca_file)
    try:
        return run_in_job(argv, cwd, policy, allowed, settings, api)
    except RunnerTimedOut as error:
        note = f"{SANDBOX_NOTE} {error}\n"
        raise CommandTimedOut(list(argv), policy.limits.wall_s, "", note, reason=str(error)) from error
    finally:
        api.close()


def require_workspace_sandbox(policy: SandboxPolicy | None = None) -> None:
    """Refuse up front, in one line (SandboxUnavailable), when workspace commands could not run: no bubblewrap
    here (and the policy does not allow unconfined runs), or, with ``MODELGUARD_RUNNER``, a workspace runner
    that does not answer that it is ready. For a service or the CLI to call once at start."""
    runner = load_runner_settings()
    if runner.url is None:
        require_sandbox(policy or default_sandbox_policy())
        return
    why = runner_readiness(runner)
    if why is not None:
        raise SandboxUnavailable(f"refused to run workspace code: {why}")
