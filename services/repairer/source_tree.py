"""A revision's file tree, read-only: a workspace file's text by relative path, never outside the tree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MAX_SOURCE_BYTES = 1 << 20


@dataclass(frozen=True)
class SourceTree:
    root: Path

    def read(self, relpath: str) -> str | None:
        """The UTF-8 text of a regular file inside the tree as it is on disk, or None (missing, outside, too big, not
        text). Its line endings are the file's own (``\\r\\n`` stays), so an edit of the text is a patch of the file."""
        root = self.root.resolve()
        path = (root / relpath).resolve()
        if not path.is_relative_to(root) or not path.is_file() or path.stat().st_size > MAX_SOURCE_BYTES:
            return None
        try:
            return path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def python_files(self) -> list[str]:
        """Relative paths of the tree's ``.py`` files, sorted; hidden folders and symbolic links left out."""
        root = self.root.resolve()
        found = []
        for path in root.rglob("*.py"):
            relative = path.relative_to(root).as_posix()
            if path.is_symlink() or any(part.startswith(".") for part in path.relative_to(root).parts):
                continue
            if path.is_file():
                found.append(relative)
        return sorted(found)
