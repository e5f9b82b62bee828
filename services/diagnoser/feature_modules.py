"""Which files of a revision turn source columns into model inputs: the workspace's declared
``feature_modules`` (paths or globs) plus the module its ``features`` command runs and what that imports."""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

from services.diagnoser.import_closure import command_files
from services.diagnoser.inputs import WorkspaceConfig


def feature_files(tree: Path, workspace: WorkspaceConfig, candidates: list[str]) -> frozenset[str]:
    """The files of ``candidates`` (relative POSIX paths) on the feature path of ``tree``."""
    declared = {path for path in candidates if any(fnmatch(path, pattern) for pattern in workspace.feature_modules)}
    derived = command_files(tree, workspace.features) if workspace.features else frozenset()
    return frozenset(declared | set(derived))
