"""Whether a path that a workspace names (an import, a command argument) is a file or folder of its tree.

``Path.is_file`` and ``Path.is_dir`` answer False for a missing path but raise OSError for a name the file system
cannot hold at all: a component longer than its limit (ENAMETOOLONG, 255 bytes on Linux), which an outsider's
``import`` of a long dotted name or a long ``pytest -k`` expression gives. Such a name names nothing in the tree.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path

_NAMES_NOTHING = frozenset({errno.ENAMETOOLONG})


def names_a_file(path: Path) -> bool:
    """``path.is_file()``; False when the file system cannot hold the name."""
    return _names(path, Path.is_file)


def names_a_folder(path: Path) -> bool:
    """``path.is_dir()``; False when the file system cannot hold the name."""
    return _names(path, Path.is_dir)


def _names(path: Path, is_kind: Callable[[Path], bool]) -> bool:
    try:
        return is_kind(path)
    except OSError as error:
        if error.errno in _NAMES_NOTHING:
            return False
        raise
