"""A revision's file tree, read-only: a workspace file's text by relative path, never outside the tree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from libs.python_source.source_encoding import UnreadableSource, decode_source

MAX_SOURCE_BYTES = 1 << 20


@dataclass(frozen=True)
class SourceTree:
    root: Path

    def read(self, relpath: str) -> str | None:
        """The UTF-8 text of a regular file inside the tree as it is on disk, or None (``unreadable_reason`` says
        why). Its line endings are the file's own (``\\r\\n`` stays), so an edit of the text is a patch of the file.

        A Python file is read by Python's rule (PEP 263, ``decode_source``), the one every reader shares; one that
        declares another encoding (``# -*- coding: latin-1 -*-``) is readable to Python but not given out here: a
        repair's edit is written as UTF-8 text, which would silently re-encode the whole file, and the patch guard
        refuses a file that declares any encoding but UTF-8."""
        return self._read(relpath)[0]

    def unreadable_reason(self, relpath: str) -> str:
        """Why ``read`` gives no text for ``relpath``, without the path (empty when it gives one)."""
        return self._read(relpath)[1]

    def _read(self, relpath: str) -> tuple[str | None, str]:
        root = self.root.resolve()
        path = (root / relpath).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            return None, "not a file inside the revision"
        if path.stat().st_size > MAX_SOURCE_BYTES:
            return None, f"larger than {MAX_SOURCE_BYTES} bytes"
        try:
            raw = path.read_bytes()
        except OSError as error:
            return None, f"cannot be read: {error.strerror or error}"
        if not relpath.endswith(".py"):
            try:
                return raw.decode("utf-8"), ""
            except UnicodeDecodeError as error:
                return None, f"not UTF-8 text: byte 0x{raw[error.start]:02x} at offset {error.start}"
        try:
            decoded = decode_source(raw)
        except UnreadableSource as unreadable:
            return None, unreadable.reason
        if not decoded.is_utf8:
            return None, (
                f"it declares encoding {decoded.encoding} (PEP 263): a repair edits UTF-8 source only, and would "
                "otherwise rewrite the whole file in UTF-8"
            )
        return decoded.text, ""

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
