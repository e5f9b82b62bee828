"""Which isolation this machine allows, probed once per process by starting a real sandbox with the view a
command gets (the allow-listed file system, the interpreter, an unprivileged uid).

- ``bwrap`` (bubblewrap), the only mechanism that can hide ModelGuard's files. As root it runs without a
  user namespace and the command starts as an unprivileged uid (so per-user limits bind); as any other
  user it runs in a user namespace. Network, PID, IPC, UTS and cgroup namespaces in both cases.
- ``none``: nothing is isolated. ``run_sandboxed`` refuses to run unless the policy allows unconfined runs.

``unshare`` is not a mechanism here: it gives namespaces but no way to hide a file without building every
mount by hand, which is what bubblewrap does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from libs.policy.sandbox import NOBODY, IsolationMode
from libs.sandbox.confinement import Identity, Mount, View, bwrap_argv, interpreter_paths
from libs.sandbox.process import CommandNotAllowed

Mechanism = Literal["bwrap", "none"]
PROBE_TIMEOUT_S = 20.0
INSTALL_HINT = "apt-get install bubblewrap (the Dockerfile installs it)"


class SandboxUnavailable(CommandNotAllowed):
    """No mechanism that can hide ModelGuard's keys works here, and the policy does not allow unconfined runs:
    ModelGuard refuses to run the command (callers that handle a refused command handle this one)."""


@dataclass(frozen=True)
class Isolation:
    mechanism: Mechanism
    program: str | None
    reason: str
    """Why bubblewrap is not in use (empty when it is)."""
    drop_from_root: bool = False
    """ModelGuard is root: bubblewrap runs without a user namespace and the command starts unprivileged."""

    @property
    def network(self) -> bool:
        return self.mechanism == "bwrap"

    @property
    def filesystem(self) -> bool:
        return self.mechanism == "bwrap"

    @property
    def processes(self) -> bool:
        """A PID namespace: killing the sandbox kills every process it started, daemons included."""
        return self.mechanism == "bwrap"

    def identity(self, uid: int = NOBODY, gid: int = NOBODY) -> Identity:
        """Who the command runs as: ``uid``/``gid`` when ModelGuard is root, else ModelGuard's own user."""
        if self.drop_from_root:
            return Identity(uid, gid, drop_from_root=True)
        return Identity(os.getuid(), os.getgid(), drop_from_root=False)

    def network_status(self) -> str:
        if self.network:
            return "enforced (bwrap: network namespace without interfaces)"
        return f"unavailable ({self.reason})"

    def filesystem_status(self) -> str:
        if self.filesystem:
            return (
                "enforced (bwrap: only the system folders, the interpreter, the working directory and the inputs "
                "are readable; only the scratch folder and the output folders are writable)"
            )
        return f"not enforced: everything ModelGuard's user can read or write ({self.reason})"

    def refusal(self) -> str:
        """One line: why no workspace command runs here, and how to fix it."""
        return (
            f"refused to run workspace code: no sandbox can hide ModelGuard's keys here ({self.reason}); "
            f"install bubblewrap: {INSTALL_HINT}; for local development only, "
            "sandbox.allow_unconfined: true in the central policy runs it unconfined"
        )


def _probe_view(folder: Path) -> View:
    cwd = folder / "cwd"
    cwd.mkdir(mode=0o755)
    cwd.chmod(0o755)
    return View(cwd=Mount(cwd, cwd), readable=tuple(Mount(path, path) for path in interpreter_paths()))


def _works(program: str, identity: Identity) -> str:
    """Empty when the interpreter started in a sandbox of this kind as ``identity``, else why not."""
    check = f"import os, sys; sys.exit(0 if os.getuid() == {identity.uid} else 3)"
    with tempfile.TemporaryDirectory(prefix="modelguard-probe-") as folder:
        argv = bwrap_argv(program, _probe_view(Path(folder)), identity, [sys.executable, "-c", check])
        try:
            done = subprocess.run(
                argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False, env={}
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{program}: {exc}"
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return f"{program}: {tail[0]}"
    return ""


def probe_isolation(
    mode: IsolationMode = "auto", bwrap: str | None = "bwrap", uid: int = NOBODY, gid: int = NOBODY
) -> Isolation:
    """bubblewrap when it starts here (``mode`` auto or bwrap), else ``none`` with the reason. ``bwrap`` names
    the program (looked up on PATH; None: not installed); ``uid``/``gid`` the command's identity as root. Probed
    once per process for each set of values, however the call names them."""
    return _probed(mode, bwrap, uid, gid)


@cache
def _probed(mode: IsolationMode, bwrap: str | None, uid: int, gid: int) -> Isolation:
    if mode == "none":
        return Isolation("none", None, "isolation disabled by the sandbox policy")
    program = shutil.which(bwrap) if bwrap else None
    if program is None:
        return Isolation("none", None, "bwrap not installed")
    reasons = []
    if os.getuid() == 0:
        failure = _works(program, Identity(uid, gid, drop_from_root=True))
        if not failure:
            return Isolation("bwrap", program, "", drop_from_root=True)
        reasons.append(f"as root without a user namespace: {failure}")
    failure = _works(program, Identity(os.getuid(), os.getgid(), drop_from_root=False))
    if not failure:
        return Isolation("bwrap", program, "; ".join(reasons))
    reasons.append(f"in a user namespace: {failure}")
    return Isolation("none", None, "; ".join(reasons))
