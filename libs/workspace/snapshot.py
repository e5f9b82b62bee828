"""Snapshots of one commit's tree: a deterministic tar from ``git archive``, a safe extractor, and
per-file digests to prove that a tree did (or did not) change."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from pathlib import Path, PurePosixPath

from libs.workspace.git import git_dir_of, run_git

DIGEST_IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache"})
DEFAULT_MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024


class UnsafeSnapshot(ValueError):
    """The bytes are not a tar archive, or it holds a member that would land outside the destination or is
    not a plain file, directory or in-tree symbolic link."""


def snapshot_commit(repo: Path, sha: str) -> bytes:
    """The tree of commit ``sha`` as a tar archive; the same commit always gives the same bytes."""
    git_dir = f"--git-dir={git_dir_of(repo)}"
    commit = run_git([git_dir, "rev-parse", "--verify", f"{sha}^{{commit}}"], repo).decode().strip()
    return run_git([git_dir, "archive", "--format=tar", commit], repo)


def _check_member(member: tarfile.TarInfo, dest: Path) -> None:
    name = PurePosixPath(member.name)
    if name.is_absolute() or member.name.startswith(("/", "\\")):
        raise UnsafeSnapshot(f"absolute path in snapshot: {member.name!r}")
    if ".." in name.parts:
        raise UnsafeSnapshot(f"parent reference in snapshot: {member.name!r}")
    target = (dest / name).resolve()
    if not target.is_relative_to(dest):
        raise UnsafeSnapshot(f"member leaves the destination: {member.name!r}")
    if member.islnk():
        raise UnsafeSnapshot(f"hard link in snapshot: {member.name!r}")
    if member.issym():
        link = PurePosixPath(member.linkname)
        if link.is_absolute() or not (target.parent / link).resolve().is_relative_to(dest):
            raise UnsafeSnapshot(f"link points out of the snapshot: {member.name!r} -> {member.linkname!r}")
    elif not (member.isfile() or member.isdir()):
        raise UnsafeSnapshot(f"unsupported member type in snapshot: {member.name!r}")


def extract_snapshot(data: bytes, dest: Path, *, max_bytes: int = DEFAULT_MAX_SNAPSHOT_BYTES) -> None:
    """Extract a snapshot into ``dest``, which must be missing or empty. Every member is checked
    before anything is written."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    dest = dest.resolve()
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            members = archive.getmembers()
            if sum(member.size for member in members if member.isfile()) > max_bytes:
                raise UnsafeSnapshot(f"snapshot unpacks to more than {max_bytes} bytes")
            for member in members:
                _check_member(member, dest)
            archive.extractall(dest, members=members, filter="data")
    except tarfile.ReadError as error:
        raise UnsafeSnapshot(f"not an uncompressed tar archive ({error})") from error


def file_digest(path: Path) -> str:
    if path.is_symlink():
        return hashlib.sha256(b"symlink:" + os.readlink(path).encode()).hexdigest()
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_digests(root: Path) -> dict[str, str]:
    """Map every file under ``root`` (POSIX relative path) to its sha256, skipping byte-code and
    pytest cache folders; links are hashed by their target, never followed."""
    root = Path(root)
    digests: dict[str, str] = {}
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(name for name in subdirs if name not in DIGEST_IGNORED_DIRS)
        for name in sorted(files):
            path = Path(directory) / name
            digests[path.relative_to(root).as_posix()] = file_digest(path)
        for name in subdirs:
            path = Path(directory) / name
            if path.is_symlink():
                digests[path.relative_to(root).as_posix()] = file_digest(path)
    return dict(sorted(digests.items()))
