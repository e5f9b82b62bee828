"""The folders of the sandbox's own that one command writes to and, when needed, reads from, owned by the uid
the command runs as:

- ``home`` and ``tmp``: its HOME and TMPDIR;
- one empty folder per output folder, mounted where the command expects that folder. When the command has
  ended, the regular files it wrote there are copied into the real folder: a file already there is
  replaced only when the command line named it as an output; links, devices and pipes are never copied;
- a copy of an input (or of the working directory) that the command's uid could not read where it is
  (a file of mode 0600, a folder of mode 0700), mounted read-only in its place.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from libs.sandbox.confinement import Identity, Mount
from libs.sandbox.process import CommandNotAllowed
from libs.sandbox.protected_paths import inside

READ = 4
SEARCH = 1


@dataclass(frozen=True)
class CollectedOutputs:
    written: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    """``path: why`` for each file the command left that was not copied."""


def _allowed(mode: int, owner: int, group: int, identity: Identity, wanted: int) -> bool:
    if identity.uid == 0:
        return True
    if owner == identity.uid:
        bits = mode >> 6
    elif group == identity.gid:
        bits = mode >> 3
    else:
        bits = mode
    return bits & wanted == wanted


def readable_by(path: Path, identity: Identity) -> bool:
    """Whether ``identity`` can read ``path`` (every file and folder in it, for a folder) by its permission
    bits. Links are not followed: their targets are not part of the input."""
    if not identity.drop_from_root:
        return _readable_by_self(path)
    for entry in [path, *_tree(path)]:
        info = entry.lstat()
        if stat.S_ISLNK(info.st_mode):
            continue
        wanted = READ | SEARCH if stat.S_ISDIR(info.st_mode) else READ
        if not _allowed(info.st_mode, info.st_uid, info.st_gid, identity, wanted):
            return False
    return True


def _readable_by_self(path: Path) -> bool:
    entries = [path, *_tree(path)]
    return all(entry.is_symlink() or os.access(entry, os.R_OK) for entry in entries)


def _tree(path: Path) -> list[Path]:
    if not path.is_dir() or path.is_symlink():
        return []
    found: list[Path] = []
    for folder, subfolders, files in os.walk(path):
        found += [Path(folder) / name for name in [*subfolders, *files]]
    return found


def _hand_over(path: Path, identity: Identity, mode: int) -> None:
    if identity.drop_from_root:
        os.lchown(path, identity.uid, identity.gid)
    if not path.is_symlink():
        path.chmod(mode)


class Staging:
    """The command's own folders under ``root`` (a fresh private folder, removed by the caller)."""

    def __init__(self, root: Path, identity: Identity) -> None:
        self.root = root
        self.identity = identity
        self._outputs: list[tuple[Path, Path]] = []
        self._copies = 0

    def _fresh(self, name: str) -> Path:
        folder = self.root / name
        folder.mkdir(parents=True)
        _hand_over(folder, self.identity, 0o755)
        return folder

    def scratch(self) -> tuple[Path, Path]:
        """HOME and TMPDIR."""
        return self._fresh("home"), self._fresh("tmp")

    def output_folder(self, real: Path) -> Mount:
        """An empty folder of the command's own, mounted at ``real``."""
        staged = self._fresh(f"outputs/{len(self._outputs)}")
        self._outputs.append((staged, real))
        return Mount(staged, real)

    def readable(self, path: Path) -> Mount:
        """``path`` itself when the command's uid can read it there, else a copy of it it can read."""
        if readable_by(path, self.identity):
            return Mount(path, path)
        if inside(self.root, path):  # copying it would copy the copy: a tree copied into itself until names are
            # too long, and as many copies of the workspace as fit in a path
            raise CommandNotAllowed(
                f"refused to copy {path} for the command: it holds the sandbox's own folder {self.root} (ModelGuard's "
                "temporary folder, TMPDIR, lies inside it)"
            )
        self._copies += 1
        holder = self._fresh(f"inputs/{self._copies}")
        copy = holder / (path.name or "root")
        if path.is_dir():
            shutil.copytree(path, copy, symlinks=True)
            for entry in [copy, *_tree(copy)]:
                _hand_over(entry, self.identity, 0o755 if entry.is_dir() else 0o644)
        else:
            shutil.copyfile(path, copy)
            _hand_over(copy, self.identity, 0o644)
        return Mount(copy, path)

    def scratch_files(self) -> tuple[str, ...]:
        """Files the command left in HOME and TMPDIR, relative to the staging root."""
        found = [entry for name in ("home", "tmp") for entry in _tree(self.root / name)]
        return tuple(sorted(entry.relative_to(self.root).as_posix() for entry in found if not entry.is_dir()))

    def collect_outputs(self, named: Iterable[Path], mounted: Iterable[Path]) -> CollectedOutputs:
        """Copy what the command wrote in its output folders into the real ones. ``named``: the output files
        the command line named (they may be replaced); ``mounted``: paths something else was mounted on
        inside an output folder (their empty stand-ins are not outputs)."""
        named_files = set(named)
        written: list[str] = []
        refused: list[str] = []
        for staged, real in self._outputs:
            stand_ins = {path for path in mounted if path != real}
            for entry in sorted(_tree(staged)):
                target = real / entry.relative_to(staged)
                if any(inside(target, stand_in) for stand_in in stand_ins):
                    continue
                why = _refusal(entry, target, real, named_files)
                if why is not None:
                    refused.append(f"{target}: {why}")
                elif not entry.is_dir():
                    shutil.copyfile(entry, target)
                    written.append(str(target))
                else:
                    target.mkdir(exist_ok=True)
        return CollectedOutputs(tuple(written), tuple(refused))


def _refusal(entry: Path, target: Path, real: Path, named: set[Path]) -> str | None:
    info = entry.lstat()
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        return "not a regular file"
    if not Path(os.path.realpath(target.parent)).is_relative_to(os.path.realpath(real)):
        return "outside the output folder"
    if os.path.islink(target):
        return "a link is there"
    if stat.S_ISDIR(info.st_mode):
        return None if not os.path.lexists(target) or target.is_dir() else "a file is there"
    if target.is_dir():
        return "a folder is there"
    if os.path.lexists(target) and target not in named:
        return "a file is already there and the command line did not name it as an output"
    return None
