"""Run git with an isolated configuration: no system or global config, no prompts, no hooks path
inherited from the caller's environment, so results do not depend on the machine."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


class GitCommandFailed(RuntimeError):
    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        self.args_run = tuple(args)
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"git {' '.join(args)} exited with {returncode}: {stderr.strip()[-2000:]}")


def isolated_git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": os.devnull,
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    env.update(extra or {})
    return env


def run_git(
    args: Sequence[str],
    cwd: Path,
    *,
    extra_env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> bytes:
    """Run ``git <args>`` in ``cwd`` and return its stdout; raise GitCommandFailed on a non-zero exit."""
    completed = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=isolated_git_env(extra_env),
        input=stdin,
        capture_output=True,
        check=False,
    )
    if completed.returncode != 0:
        raise GitCommandFailed(args, completed.returncode, completed.stderr.decode("utf-8", "replace"))
    return completed.stdout


def git_dir_of(repo: Path) -> Path:
    """The git directory of ``repo`` (a work tree or a bare repository). Naming it explicitly keeps git
    from walking up into an enclosing repository when ``repo`` is not one itself."""
    repo = Path(repo)
    if (repo / ".git").is_dir():
        return repo / ".git"
    if (repo / "HEAD").is_file() and (repo / "objects").is_dir():
        return repo
    raise FileNotFoundError(f"{repo} is not a git repository")
