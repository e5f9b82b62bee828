"""A phase's private copy of an incident's workspace: both trees and both data windows, from the artifact
store; or both trees only, for a phase that reads no data (the repairer).

Nothing reads the copy once its block ends, so it is removed off the handler's path (`folder_removal`): removing
two trees and the windows took a few ms of each phase's handling, before its output could go."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from contracts.common import WorkspaceRefs
from libs.artifacts.store import ArtifactStore
from libs.sandbox.folder_removal import scratch_folder
from libs.workspace.data_windows import DataWindow, unpack_data_windows
from libs.workspace.snapshot import extract_snapshot


@dataclass(frozen=True)
class MaterializedWorkspace:
    base: Path
    candidate: Path
    approval: DataWindow
    incident: DataWindow

    @property
    def data(self) -> Path:
        """The rows the candidate was scored on: the incident window's evaluation data."""
        return self.incident.eval


@dataclass(frozen=True)
class MaterializedTrees:
    base: Path
    candidate: Path


@contextmanager
def materialized_trees(
    artifacts: ArtifactStore, refs: WorkspaceRefs, scratch_root: Path
) -> Iterator[MaterializedTrees]:
    """Both trees, extracted into a fresh temporary folder removed afterwards (on the removal thread); artifacts
    are digest-checked on read."""
    scratch_root.mkdir(parents=True, exist_ok=True)
    with scratch_folder("workspace-", scratch_root) as root:
        extract_snapshot(artifacts.get(refs.base_snapshot), root / "base")
        extract_snapshot(artifacts.get(refs.candidate_snapshot), root / "candidate")
        yield MaterializedTrees(root / "base", root / "candidate")


@contextmanager
def materialized_workspace(
    artifacts: ArtifactStore, refs: WorkspaceRefs, scratch_root: Path
) -> Iterator[MaterializedWorkspace]:
    """Both trees and the data windows beside them (``data/``), in the same folder, removed afterwards."""
    with materialized_trees(artifacts, refs, scratch_root) as trees:
        windows = unpack_data_windows(artifacts.get(refs.data), trees.base.parent / "data")
        yield MaterializedWorkspace(trees.base, trees.candidate, windows["approval"], windows["incident"])
