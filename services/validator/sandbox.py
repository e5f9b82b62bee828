"""A throwaway copy of the candidate workspace, and ``git apply`` of a patch into it.

The source workspace is only read. The copy (``libs.sandbox.copy``: no version-control data, virtual
environments, caches or byte-code; links out of the workspace refused) lives in a fresh temporary folder
that is removed on exit; git runs with an isolated configuration and a ceiling at the sandbox folder, so it
never discovers (or writes to) a repository around it, and refuses paths that leave the copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from libs.sandbox.copy import copy_workspace
from libs.sandbox.folder_removal import scratch_folder
from libs.workspace.git import GitCommandFailed, run_git


class PatchApplication(BaseModel):
    model_config = ConfigDict(frozen=True)

    applied: bool
    detail: str
    numstat: tuple[tuple[int, int, str], ...] = ()
    """(added, removed, path) per file, as git counts them."""


@contextmanager
def sandbox_copy(candidate_dir: Path) -> Iterator[Path]:
    """Yield a fresh copy of ``candidate_dir``; the copy and its folder are deleted afterwards (on the removal
    thread, off the validation's path). Raises UnsafeWorkspace for a link out of the workspace or a special file."""
    with scratch_folder("modelguard-sandbox-") as folder:
        yield copy_workspace(candidate_dir, folder / "workspace")


def apply_patch(workspace: Path, unified_diff: str) -> PatchApplication:
    """Check, then apply ``unified_diff`` (``a/``/``b/`` paths) inside ``workspace``; nothing is
    written when the check fails."""
    patch = unified_diff.encode("utf-8")
    ceiling = {"GIT_CEILING_DIRECTORIES": str(Path(workspace).resolve().parent)}
    try:  # git applies a patch whole or not at all: every hunk of every file is checked before one is written
        numstat = run_git(
            ["apply", "--apply", "--numstat", "--whitespace=nowarn", "-"], workspace, extra_env=ceiling, stdin=patch
        )
    except GitCommandFailed as error:
        return PatchApplication(applied=False, detail=error.stderr.strip()[-2000:] or str(error))
    counts = tuple(_numstat_rows(numstat.decode("utf-8", "replace")))
    return PatchApplication(applied=True, detail=f"applied to {len(counts)} file(s)", numstat=counts)


def _numstat_rows(text: str) -> Iterator[tuple[int, int, str]]:
    for line in text.splitlines():
        added, removed, path = line.split("\t", 2)
        yield (int(added) if added.isdigit() else 0, int(removed) if removed.isdigit() else 0, path)
