"""Writing a file so that a reader never sees half of it and a crash never leaves half of it: the bytes go to a
temporary file in the same folder, which is then renamed over the target (a rename within one file system is
atomic). The temporary file is removed when the write fails."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: bytes, prefix: str = ".incoming-") -> None:
    """Write ``data`` to ``path``, creating its folder, replacing any file there. Raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
