"""Temporary folders named for the process that made them: `modelguard-{kind}-{PID namespace}-{pid}-...`. A
process that ended without removing its folders (SIGKILLed, killed for its memory) cannot say so; the next process
that makes folders of the same kind removes them, telling them apart by their name."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from libs.process_liveness import pid_namespace_inode, process_ended


def own_prefix(kind: str) -> str:
    """The name prefix of this process's temporary folders of `kind`."""
    return f"modelguard-{kind}-{pid_namespace_inode()}-{os.getpid()}-"


def remove_ended(kind: str, parent: Path | None = None) -> None:
    """Remove the folders of `kind` in `parent` (default: the temporary folder) made by a process of this PID
    namespace that has ended; never a running process's, another namespace's, or a folder named otherwise."""
    namespace = pid_namespace_inode()
    if not namespace:
        return  # no process id can be judged
    start = f"modelguard-{kind}-{namespace}-"
    try:
        entries = list(os.scandir(parent if parent is not None else tempfile.gettempdir()))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(start):
            continue
        pid = entry.name[len(start) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or not entry.is_dir(follow_symlinks=False):
            continue
        if process_ended(int(pid)):
            shutil.rmtree(entry.path, ignore_errors=True)
