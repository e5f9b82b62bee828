"""A phase's private copy of an incident's workspace: both trees and the data, from the artifact store."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from contracts.common import WorkspaceRefs
from libs.artifacts.store import LocalArtifactStore
from libs.workspace.snapshot import extract_snapshot

DATA_FILE = "data.csv"


@dataclass(frozen=True)
class MaterializedWorkspace:
    base: Path
    candidate: Path
    data: Path


@contextmanager
def materialized_workspace(
    artifacts: LocalArtifactStore, refs: WorkspaceRefs, scratch_root: Path
) -> Iterator[MaterializedWorkspace]:
    """Extract into a fresh temporary folder, removed afterwards; artifacts are digest-checked on read."""
    scratch_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=scratch_root, prefix="workspace-") as tmp:
        root = Path(tmp)
        extract_snapshot(artifacts.get(refs.base_snapshot), root / "base")
        extract_snapshot(artifacts.get(refs.candidate_snapshot), root / "candidate")
        data = root / DATA_FILE
        data.write_bytes(artifacts.get(refs.data))
        yield MaterializedWorkspace(root / "base", root / "candidate", data)
