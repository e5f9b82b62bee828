"""What a trial's result depends on, as one digest: every file of the tree and the window's two files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from libs.workspace.data_windows import DataWindow
from libs.workspace.evaluation_cache import content_digests


def trial_digests(pairs: Sequence[tuple[Path, DataWindow]]) -> list[str]:
    """The digest of each (tree, window), each distinct tree and data file read once: the shared evaluation cache's
    (``content_digest``), so its keys agree with every service's."""
    return content_digests(pairs)
