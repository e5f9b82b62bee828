"""What a trial's result depends on, as one digest: every file of the tree and the window's two files."""

from __future__ import annotations

from pathlib import Path

from libs.workspace.data_windows import DataWindow
from libs.workspace.evaluation_cache import content_digest


def trial_digest(tree: Path, window: DataWindow) -> str:
    return content_digest(tree, window)  # the shared evaluation cache's, so its keys agree with every service's
