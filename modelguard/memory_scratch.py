"""The local stack's scratch on a memory filesystem, when the machine has one with room.

Every phase after detection lays out the incident's two trees and data windows, and every workspace command its
staging folder, predictions and reports; nothing of it outlives the step. On this machine's disk (ext4) laying out
one incident's workspace took 6.1 ms p50 and on its memory filesystem 3.8 ms, and the stack does it about four times
per incident, besides each command's staging. Three alternating pairs of eight incidents one at a time measured
ModelGuard's own time per incident at 182, 200 and 191 ms p50 with scratch under the home and 186, 172 and 155 ms
with it here (`docs/architecture.md`).

The folder is the stack's own: named after its home, made mode 0700 by this user, and used only when it is a real
folder this user owns that nobody else can enter (``/dev/shm`` is writable by everyone: a name taken by another user,
or a link, is not used). Without a memory filesystem, or with less than ``ROOM_BYTES`` free on it (a container's
``/dev/shm`` is 64 MiB unless it was given more), the services keep their scratch under the home. A scratch folder
set in ``MODELGUARD_SCRATCH_DIR`` is always used instead, and never removed by the stack.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

from libs.settings import Settings

MEMORY_PARENT = Path("/dev/shm")
ROOM_BYTES = 2 * 1024**3
"""Free space the memory filesystem must have: a few incidents' workspaces at once, each snapshot up to 256 MiB."""
MEMORY_FILESYSTEMS = frozenset({"tmpfs", "ramfs"})


def memory_scratch(home: Path, parent: Path = MEMORY_PARENT, room: int = ROOM_BYTES) -> Path | None:
    """The stack of ``home``'s scratch folder on the memory filesystem at ``parent``, made if needed; None when
    ``parent`` is no memory filesystem, has less than ``room`` bytes free, or the folder's name is not this user's."""
    if filesystem_type(parent) not in MEMORY_FILESYSTEMS:
        return None
    try:
        free = os.statvfs(parent)
    except OSError:
        return None
    if free.f_bavail * free.f_frsize < room:
        return None
    folder = scratch_folder_of(home, parent)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    return folder if _own_private_folder(folder) else None


def remove_memory_scratch(home: Path, parent: Path = MEMORY_PARENT) -> None:
    """Remove what the stack of ``home`` left in its scratch folder there (nothing, unless a service was killed in
    the middle of a step), when that folder is its own."""
    folder = scratch_folder_of(home, parent)
    if _own_private_folder(folder):
        shutil.rmtree(folder, ignore_errors=True)


def scratch_description(settings: Settings, parent: Path = MEMORY_PARENT) -> str:
    """Where the running stack of ``settings`` (its caller's: the ``MODELGUARD_SCRATCH_DIR`` it set, if any) lays out
    workspaces, for a benchmark's report."""
    chosen = settings.scratch_root
    if chosen is not None:
        return f"{chosen} (MODELGUARD_SCRATCH_DIR, {filesystem_type(chosen) or 'unknown filesystem'})"
    folder = scratch_folder_of(settings.home, parent)
    if _own_private_folder(folder):
        return f"{folder} ({filesystem_type(folder)}, the stack's memory scratch)"
    under_home = settings.scratch_dir("<service>")
    return f"under the home, {under_home} ({filesystem_type(settings.home) or 'unknown filesystem'})"


def scratch_folder_of(home: Path, parent: Path = MEMORY_PARENT) -> Path:
    return parent / f"modelguard-{hashlib.sha256(str(Path(home).resolve()).encode()).hexdigest()[:16]}"


def _own_private_folder(folder: Path) -> bool:
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def filesystem_type(path: Path, mounts: Path = Path("/proc/self/mounts")) -> str | None:
    """The type of the filesystem ``path`` lies on (its deepest mount point), from ``mounts``; None when unknown."""
    try:
        where = os.path.realpath(path)
        lines = mounts.read_text().splitlines()
    except OSError:
        return None
    found: tuple[int, str] | None = None
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = _unescaped(fields[1])
        inside = where == point or where.startswith(point.rstrip("/") + "/")
        if inside and (found is None or len(point) >= found[0]):
            found = (len(point), fields[2])
    return found[1] if found is not None else None


def _unescaped(field: str) -> str:
    """A mount point as ``/proc/self/mounts`` writes it: a space, tab, newline or backslash as an octal escape."""
    for escape, character in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(escape, character)
    return field
