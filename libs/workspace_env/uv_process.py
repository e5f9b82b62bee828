"""Running uv: the port the builder calls (``UvRunner``) and the real one (``run_uv``).

uv runs in ModelGuard's process space, not in the sandbox: it only reads the declaration and installs wheels
(``--only-binary :all:``), so no code of the workspace or of its packages runs (a source distribution's build
would run its ``setup.py`` here, with ModelGuard's rights and network; that is why only wheels are installed). Its
environment is built from nothing: no token or ``MODELGUARD_*`` variable reaches it but the index URL
(``UV_DEFAULT_INDEX``, never on the command line, which other processes can read), no uv configuration file is
read (``UV_NO_CONFIG``: a workspace's ``[tool.uv]`` cannot name another index), and it never downloads an
interpreter (``UV_PYTHON_DOWNLOADS=never``)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PASSED_THROUGH = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)
"""Of ModelGuard's own environment, only what reaching the index through this machine's network needs."""


@dataclass(frozen=True)
class UvOutcome:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False


UvRunner = Callable[[Sequence[str], Mapping[str, str], float], UvOutcome]
"""(uv's arguments without the program, extra environment variables, timeout in seconds) -> what it did."""


@cache
def uv_binary() -> str:
    """The uv binary of the ``uv`` wheel ModelGuard depends on."""
    from uv import find_uv_bin

    return find_uv_bin()


@cache
def uv_version() -> str:
    done = subprocess.run([uv_binary(), "--version"], capture_output=True, text=True, check=True, env={})
    return done.stdout.strip()


def uv_environment(extra: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    base = {
        "PATH": "/usr/bin:/bin",
        "HOME": environ.get("HOME", "/nonexistent"),
        "LANG": "C.UTF-8",
        "UV_NO_CONFIG": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_PROGRESS": "1",
    }
    passed = {name: environ[name] for name in PASSED_THROUGH if environ.get(name)}
    return {**base, **passed, **extra}


def run_uv(arguments: Sequence[str], extra: Mapping[str, str], timeout_s: float) -> UvOutcome:
    """uv with ``arguments`` in its own session; killed with everything it started after ``timeout_s``."""
    started = time.monotonic()
    process = subprocess.Popen(
        [uv_binary(), *arguments],
        env=uv_environment(extra),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=Path("/"),
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        timed_out = True
    return UvOutcome(process.returncode, stdout, stderr, round(time.monotonic() - started, 3), timed_out)
