"""Where a configured DataHub file is read: a relative path names the file as the services name it in provenance
(relative to their working directory, the repository in the embedded stack), and is read under a root when one
is given (``Settings.datahub_root``), so a process reads the same files without changing its working directory."""

from __future__ import annotations

from pathlib import Path


def readable(path: Path, root: Path | None) -> Path:
    """``path`` under ``root`` when it is relative and a root is given; ``path`` as it is otherwise."""
    if root is None or path.is_absolute():
        return path
    return root / path
