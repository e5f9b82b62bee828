"""Digests of every file in a tree, and what changed between two of them."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

BLOCK = 1 << 16


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes; a symbolic link is hashed by its target text, never followed."""
    if path.is_symlink():
        return hashlib.sha256(b"symlink:" + os.readlink(path).encode()).hexdigest()
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def hash_tree(root: Path) -> dict[str, str]:
    """Map every file under ``root`` (POSIX path relative to it, sorted) to its sha256. Nothing is skipped:
    byte-code or caches written by a command count as changes."""
    root = Path(root)
    digests: dict[str, str] = {}
    for directory, subdirs, files in os.walk(root):
        for name in [*files, *(entry for entry in subdirs if (Path(directory) / entry).is_symlink())]:
            path = Path(directory) / name
            digests[path.relative_to(root).as_posix()] = file_sha256(path)
    return dict(sorted(digests.items()))


@dataclass(frozen=True)
class TreeChanges:
    created: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    @property
    def unchanged(self) -> bool:
        return not (self.created or self.modified or self.deleted)

    def summary(self) -> str:
        if self.unchanged:
            return "unchanged"
        parts = [
            f"{label} {', '.join(paths[:5])}{' …' if len(paths) > 5 else ''}"
            for label, paths in (("created", self.created), ("modified", self.modified), ("deleted", self.deleted))
            if paths
        ]
        return "; ".join(parts)

    def as_dict(self) -> dict[str, list[str]]:
        return {"created": list(self.created), "modified": list(self.modified), "deleted": list(self.deleted)}


def compare_trees(before: Mapping[str, str], after: Mapping[str, str]) -> TreeChanges:
    return TreeChanges(
        created=tuple(sorted(after.keys() - before.keys())),
        modified=tuple(sorted(path for path in before.keys() & after.keys() if before[path] != after[path])),
        deleted=tuple(sorted(before.keys() - after.keys())),
    )
