"""Where a service process keeps its temporary files: its commands' staging folders, the predictions and reports
they write back, read and removed at once. With ``MODELGUARD_SCRATCH_DIR`` set they go beside the service's
workspaces there (a memory filesystem, where the stack found one), not in the machine's ``/tmp``."""

from __future__ import annotations

import tempfile
from pathlib import Path


def keep_temporary_files_in(folder: Path) -> None:
    """Every temporary file and folder this process makes from now on (``tempfile``'s default) in ``folder``, made
    mode 0700 if missing. For a service process's entry point only: it is the process's setting."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    tempfile.tempdir = str(folder)
