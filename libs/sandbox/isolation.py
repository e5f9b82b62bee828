"""Which isolation this machine allows, probed once per process by actually starting a sandbox.

- ``bwrap`` (bubblewrap): new user, network, PID, IPC and UTS namespaces, no capabilities, the file system
  read-only except the command's scratch folder and declared outputs.
- ``unshare`` (util-linux): new user, network, PID and mount namespaces; the file system is not confined
  (writes are only detected where the sandbox watches).
- ``none``: nothing is isolated, and every result says so with the reason.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from typing import Literal

from libs.sandbox.limits import IsolationMode

Mechanism = Literal["bwrap", "unshare", "none"]
PROBE_TIMEOUT_S = 10.0
BWRAP_NAMESPACES = ("--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session")
UNSHARE_NAMESPACES = (
    "--user",
    "--map-root-user",
    "--net",
    "--pid",
    "--mount",
    "--mount-proc",
    "--fork",
    "--kill-child",
)


@dataclass(frozen=True)
class Isolation:
    mechanism: Mechanism
    program: str | None
    reason: str
    """Why the stronger mechanisms are not in use (empty for bwrap)."""

    @property
    def network(self) -> bool:
        return self.mechanism != "none"

    @property
    def filesystem(self) -> bool:
        return self.mechanism == "bwrap"

    @property
    def processes(self) -> bool:
        """A PID namespace: killing the sandbox kills every process it started, daemons included."""
        return self.mechanism != "none"

    def network_status(self) -> str:
        if self.network:
            return f"enforced ({self.mechanism}: network namespace without interfaces)"
        return f"unavailable ({self.reason})"

    def filesystem_status(self) -> str:
        if self.filesystem:
            return "enforced (bwrap: read-only except the scratch folder and declared outputs)"
        return "not enforced (writes are detected in the workspace and HOME only)"


def bwrap_probe_argv(program: str) -> list[str]:
    true = shutil.which("true") or "/bin/true"
    return [program, *BWRAP_NAMESPACES, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", true]


def unshare_probe_argv(program: str) -> list[str]:
    return [program, *UNSHARE_NAMESPACES, shutil.which("true") or "/bin/true"]


def _works(argv: list[str]) -> str:
    """Empty when ``argv`` ran and exited 0, else why not."""
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False, env={}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{argv[0]}: {exc}"
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return f"{argv[0]}: {tail[0]}"
    return ""


def _try_bwrap(program: str | None) -> tuple[Isolation | None, str]:
    if program is None:
        return None, "bwrap not installed"
    failure = _works(bwrap_probe_argv(program))
    return (Isolation("bwrap", program, ""), "") if not failure else (None, failure)


def _try_unshare(program: str | None, before: str) -> tuple[Isolation | None, str]:
    if program is None:
        return None, "unshare not installed"
    failure = _works(unshare_probe_argv(program))
    return (Isolation("unshare", program, before), "") if not failure else (None, failure)


@cache
def probe_isolation(
    mode: IsolationMode = "auto", bwrap: str | None = "bwrap", unshare: str | None = "unshare"
) -> Isolation:
    """The strongest mechanism ``mode`` allows that works here. ``bwrap`` and ``unshare`` name the programs
    (looked up on PATH); None means not installed."""
    if mode == "none":
        return Isolation("none", None, "isolation disabled by the sandbox policy")
    reasons: list[str] = []
    if mode in ("auto", "bwrap"):
        found, why = _try_bwrap(shutil.which(bwrap) if bwrap else None)
        if found:
            return found
        reasons.append(why)
    if mode in ("auto", "unshare"):
        found, why = _try_unshare(shutil.which(unshare) if unshare else None, "; ".join(reasons))
        if found:
            return found
        reasons.append(why)
    return Isolation("none", None, "; ".join(reasons))
