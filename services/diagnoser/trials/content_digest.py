"""What a trial's result depends on, as one digest: every file of the tree and the window's two files."""

from __future__ import annotations

import hashlib
from pathlib import Path

from libs.workspace.data_windows import DataWindow
from libs.workspace.snapshot import file_digest, tree_digests


def trial_digest(tree: Path, window: DataWindow) -> str:
    digest = hashlib.sha256()
    for path, sha in tree_digests(tree).items():
        digest.update(f"tree {path} {sha}\n".encode())
    digest.update(f"train {file_digest(window.train)}\neval {file_digest(window.eval)}\n".encode())
    return digest.hexdigest()
