"""Run one workspace command: only the allow-listed Python, no shell, a scrubbed environment and a
timeout that kills the whole process group."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ALLOWED_PROGRAM = "python"
PASSED_THROUGH = ("PATH", "LANG")
FIXED_ENV = {
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}
SECRET_NAME_MARKERS = ("TOKEN", "SECRET", "KEY", "PASSWORD")


class CommandNotAllowed(ValueError):
    """The command does not start with the allow-listed interpreter."""


class CommandTimedOut(TimeoutError):
    def __init__(self, argv: Sequence[str], timeout_s: float, stdout: str, stderr: str) -> None:
        self.argv = list(argv)
        self.timeout_s = timeout_s
        self.stdout = stdout
        self.stderr = stderr
        super().__init__(f"{' '.join(argv)} did not finish within {timeout_s} s")


@dataclass(frozen=True)
class CommandResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float

    @property
    def succeeded(self) -> bool:
        return self.returncode == 0


def looks_secret(name: str) -> bool:
    upper = name.upper()
    return any(marker in upper for marker in SECRET_NAME_MARKERS)


def scrubbed_env(home: Path, source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment a workspace command sees; nothing else from ``source`` gets through."""
    source = os.environ if source is None else source
    env = {name: source[name] for name in PASSED_THROUGH if name in source}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env.update(FIXED_ENV)
    env["HOME"] = str(home)
    return {name: value for name, value in env.items() if not looks_secret(name)}


def resolve_argv(argv: Sequence[str]) -> list[str]:
    if not argv or argv[0] != ALLOWED_PROGRAM:
        raise CommandNotAllowed(f"only {ALLOWED_PROGRAM!r} commands may run, got {list(argv)!r}")
    return [sys.executable, *argv[1:]]


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def run_command(argv: list[str], cwd: Path, timeout_s: float) -> CommandResult:
    """Run ``argv`` in ``cwd``; a non-zero exit is returned, a timeout raises CommandTimedOut."""
    command = resolve_argv(argv)
    with tempfile.TemporaryDirectory(prefix="modelguard-home-") as home:
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=scrubbed_env(Path(home)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            shell=False,
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            raise CommandTimedOut(argv, timeout_s, _decode(stdout), _decode(stderr)) from None
        duration = time.monotonic() - started
    return CommandResult(
        argv=list(argv),
        returncode=process.returncode,
        stdout=_decode(stdout),
        stderr=_decode(stderr),
        duration_s=round(duration, 3),
    )
