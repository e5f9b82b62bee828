"""A folder as a tar for the workspace runner, and back: folders, regular files (executable or not) and links
that stay inside the folder, nothing else. Packing refuses what the runner could not receive (a special file,
a link out of the folder) and replaces each protected path inside by an empty stand-in, as the sandbox covers
it; unpacking checks every member before anything is written (no absolute name, no ``..``, nothing through a
link, no link out of the tree, bounded size and count), then extracts with tarfile's ``data`` filter."""

from __future__ import annotations

import os
import posixpath
import stat
import tarfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from libs.sandbox.remote.protocol import MAX_TREE_BYTES, MAX_TREE_ENTRIES
from libs.tar_headers import CheckedHeader
from libs.tree_links import first_link_leaving, tree_name

KINDS = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE)


class TreeRefused(ValueError):
    """The folder cannot be sent, or the tar is not a tree the runner or the caller accepts."""


@dataclass(frozen=True)
class _Entry:
    name: str
    kind: str
    path: Path
    mode: int = 0o644
    size: int = 0
    link: str = ""


def link_stays_inside(name: str, target: str) -> bool:
    """Whether the link ``name`` (relative to the tree's root) pointing at ``target`` stays in the tree."""
    if not target or target.startswith("/") or "\x00" in target:
        return False
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    return resolved != ".." and not resolved.startswith("../")


def _entries(root: Path, covered: Collection[Path], max_bytes: int, max_entries: int) -> list[_Entry]:
    covers = {os.path.abspath(path) for path in covered}
    found: list[_Entry] = []
    total = 0
    for folder, subfolders, files in os.walk(root):
        kept = []
        for name in sorted([*subfolders, *files]):
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            info = path.lstat()
            if str(path) in covers:
                found.append(_Entry(relative, "folder" if stat.S_ISDIR(info.st_mode) else "empty", path))
            elif stat.S_ISLNK(info.st_mode):
                target = os.readlink(path)
                if not link_stays_inside(relative, target):
                    raise TreeRefused(f"a link points out of it: {relative} -> {target}")
                found.append(_Entry(relative, "link", path, link=target))
            elif stat.S_ISDIR(info.st_mode):
                found.append(_Entry(relative, "folder", path, mode=0o755))
                kept.append(name)
            elif stat.S_ISREG(info.st_mode):
                mode = 0o755 if info.st_mode & 0o111 else 0o644
                found.append(_Entry(relative, "file", path, mode=mode, size=info.st_size))
                total += info.st_size
            else:
                raise TreeRefused(f"not a regular file, folder or link: {relative}")
            if len(found) > max_entries or total > max_bytes:
                raise TreeRefused(f"more than {max_entries} entries or {max_bytes} bytes")
        subfolders[:] = [name for name in subfolders if name in kept]
    _check_links({entry.name: entry.link for entry in found if entry.kind == "link"}, "a link points out of it")
    return found


def _check_links(links: dict[str, str], refusal: str) -> None:
    """Each link, followed through the tree's other links (`libs/tree_links.py`), stays in the tree: a link whose
    own text stays inside can lead out through another (`p/q/up -> ../..`, then `e -> p/q/up/..`)."""
    leaving = first_link_leaving(links)
    if leaving is not None:
        name, target = leaving
        raise TreeRefused(f"{refusal} through its other links, or never ends: {name[:200]} -> {target[:200]}")


def pack_tree(
    root: Path,
    target: Path,
    *,
    covered: Collection[Path] = (),
    max_bytes: int = MAX_TREE_BYTES,
    max_entries: int = MAX_TREE_ENTRIES,
) -> None:
    """The folder ``root`` as the tar ``target``, in a fixed order with fixed owners and times."""
    entries = _entries(Path(root), covered, max_bytes, max_entries)
    with tarfile.open(target, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if entry.kind == "folder":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                archive.addfile(info)
            elif entry.kind == "link":
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, entry.link, 0o777
                archive.addfile(info)
            elif entry.kind == "empty":
                info.mode = 0o644
                archive.addfile(info)
            else:
                info.mode, info.size = entry.mode, entry.size
                with entry.path.open("rb") as handle:
                    archive.addfile(info, handle)
                    if handle.read(1):
                        raise TreeRefused(f"{entry.name} grew while it was packed")


def _check(member: tarfile.TarInfo, seen: dict[str, bytes]) -> str:
    name = member.name.rstrip("/") if member.type == tarfile.DIRTYPE else member.name
    parts = name.split("/")
    if not name or name.startswith("/") or "\x00" in name or any(part in ("", ".", "..") for part in parts):
        raise TreeRefused(f"unsafe member name {member.name[:200]!r}")
    if member.type not in KINDS:
        raise TreeRefused(f"{name[:200]!r} is not a regular file, folder or link")
    if name in seen:
        raise TreeRefused(f"{name[:200]!r} appears twice")
    for depth in range(1, len(parts)):
        parent = "/".join(parts[:depth])
        if seen.get(parent, tarfile.DIRTYPE) != tarfile.DIRTYPE:
            raise TreeRefused(f"{name[:200]!r} lies under {parent!r}, which is not a folder")
    if member.type == tarfile.SYMTYPE and not link_stays_inside(name, member.linkname):
        raise TreeRefused(f"a link points out of the tree: {name[:200]} -> {member.linkname[:200]}")
    seen[name] = member.type
    return name


def unpack_tree(
    source: Path, dest: Path, *, max_bytes: int = MAX_TREE_BYTES, max_entries: int = MAX_TREE_ENTRIES
) -> None:
    """Extract the tree tar ``source`` into ``dest`` (created; it must not exist) after checking every member."""
    try:
        with tarfile.open(source, mode="r:", tarinfo=CheckedHeader) as archive:
            members: list[tarfile.TarInfo] = []
            seen: dict[str, bytes] = {}
            total = 0
            while (member := archive.next()) is not None:
                if len(members) >= max_entries:
                    raise TreeRefused(f"more than {max_entries} entries")
                _check(member, seen)
                total += member.size if member.type in (tarfile.REGTYPE, tarfile.AREGTYPE) else 0
                if total > max_bytes:
                    raise TreeRefused(f"unpacks to more than {max_bytes} bytes")
                members.append(member)
            _check_links(
                {tree_name(m.name): m.linkname for m in members if m.type == tarfile.SYMTYPE},
                "a link points out of the tree",
            )
            Path(dest).mkdir(mode=0o755)
            archive.extractall(dest, members=members, filter="data")
    except TreeRefused:
        raise
    except (tarfile.TarError, EOFError, OSError, ValueError, UnicodeError, OverflowError) as error:
        raise TreeRefused(f"not a readable tree: {type(error).__name__}: {str(error)[:200]}") from None
