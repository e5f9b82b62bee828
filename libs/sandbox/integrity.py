"""Digests of every file in a tree, and what changed between two of them."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from libs.sandbox.known_digests import KnownDigests


def _link_sha256(target: str) -> str:
    """A link by its target's bytes (a target that is not UTF-8 as the bytes it is)."""
    return hashlib.sha256(b"symlink:" + os.fsencode(target)).hexdigest()


def hash_tree(root: Path, known: KnownDigests | None = None) -> dict[str, str]:
    """Map every file under ``root`` (POSIX path relative to it, sorted) to its sha256. Nothing is skipped:
    byte-code or caches written by a command count as changes. A link is hashed by its target, never followed (a
    link to a folder too); a folder that cannot be read is left out, as ``os.walk`` leaves it. One ``scandir`` a
    folder and no ``Path`` an entry: the sandbox hashes the working tree before and after every command. ``known``:
    digests read before, given again for a file the kernel says is unchanged since (``known_digests``); without it
    every file is read."""
    digests: dict[str, str] = {}
    _hash_folder(os.fspath(root), "", digests, known)
    return dict(sorted(digests.items()))


def _hash_folder(folder: str, prefix: str, digests: dict[str, str], known: KnownDigests | None) -> None:
    try:
        with os.scandir(folder) as scan:
            entries = list(scan)
    except OSError:
        return
    for entry in entries:
        name = prefix + entry.name
        if entry.is_symlink():
            digests[name] = _link_sha256(os.readlink(entry.path))
        elif _is_folder(entry):
            _hash_folder(entry.path, name + "/", digests, known)
        elif known is not None:
            digests[name] = known.digest(entry.path)
        else:
            with open(entry.path, "rb") as handle:
                digests[name] = hashlib.file_digest(handle, "sha256").hexdigest()


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


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
