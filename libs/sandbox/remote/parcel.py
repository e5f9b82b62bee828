"""A parcel: one uncompressed tar of regular members, the manifest first, the way the caller and the workspace
runner hand each other a request or an answer. Written with fixed metadata; read as untrusted: only regular
members with an expected name, each at most its size limit, no name twice, at most so many members; each is
copied to a file of the reader's own while its sha256 is computed, for the manifest's digests to be checked."""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from libs.tar_headers import CheckedHeader

BLOCK = 1 << 16
REGULAR = (tarfile.REGTYPE, tarfile.AREGTYPE)


class ParcelError(ValueError):
    """The bytes are not a parcel of the expected shape."""


@dataclass(frozen=True)
class Received:
    path: Path
    sha256: str
    size: int


@dataclass(frozen=True)
class Parcel:
    manifest: bytes
    members: dict[str, Received]


def _info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, 0, 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def write_parcel(target: Path, members: Iterable[tuple[str, bytes | Path]]) -> None:
    """``members`` (the manifest first), each bytes or a file to copy, into the tar ``target``."""
    with tarfile.open(target, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, content in members:
            if isinstance(content, bytes):
                archive.addfile(_info(name, len(content)), io.BytesIO(content))
            else:
                with content.open("rb") as handle:
                    archive.addfile(_info(name, content.stat().st_size), handle)


def _copy(handle: io.BufferedReader, target: Path, size: int) -> Received:
    digest = hashlib.sha256()
    copied = 0
    with target.open("wb") as out:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
            out.write(block)
            copied += len(block)
    if copied != size:
        raise ParcelError(f"a member ends after {copied} of its {size} bytes")
    return Received(target, digest.hexdigest(), size)


def read_parcel(
    source: Path,
    *,
    manifest: str,
    manifest_limit: int,
    limit_of: Callable[[str], int | None],
    max_members: int,
    into: Path,
) -> Parcel:
    """The manifest's bytes and every other member, copied into the folder ``into``. ``limit_of(name)``: the
    largest size a member of that name may have, None when no member may have that name."""
    try:
        with tarfile.open(source, mode="r:", tarinfo=CheckedHeader) as archive:
            return _read(archive, manifest, manifest_limit, limit_of, max_members, into)
    except ParcelError:
        raise
    except (tarfile.TarError, EOFError, OSError, ValueError, UnicodeError, OverflowError) as error:
        raise ParcelError(f"not a readable tar: {type(error).__name__}: {str(error)[:200]}") from None


def _read(
    archive: tarfile.TarFile,
    manifest: str,
    manifest_limit: int,
    limit_of: Callable[[str], int | None],
    max_members: int,
    into: Path,
) -> Parcel:
    document: bytes | None = None
    members: dict[str, Received] = {}
    count = 0
    while (member := archive.next()) is not None:
        count += 1
        if count > max_members:
            raise ParcelError(f"more than {max_members} members")
        name = member.name
        if member.type not in REGULAR:
            raise ParcelError(f"member {name[:100]!r} is not a regular file")
        if document is None:
            if name != manifest:
                raise ParcelError(f"the first member is {name[:100]!r}, not {manifest}")
            if member.size > manifest_limit:
                raise ParcelError(f"{manifest} is larger than {manifest_limit} bytes")
            handle = archive.extractfile(member)
            assert handle is not None
            document = handle.read(manifest_limit + 1)
            if len(document) != member.size:
                raise ParcelError(f"{manifest} ends early")
            continue
        limit = limit_of(name)
        if limit is None or name == manifest:
            raise ParcelError(f"unexpected member {name[:100]!r}")
        if name in members:
            raise ParcelError(f"member {name!r} appears twice")
        if member.size > limit:
            raise ParcelError(f"member {name!r} is larger than {limit} bytes")
        handle = archive.extractfile(member)
        assert handle is not None
        members[name] = _copy(handle, into / str(count), member.size)  # type: ignore[arg-type]
    if document is None:
        raise ParcelError(f"no {manifest}")
    return Parcel(document, members)


def check_member(parcel: Parcel, name: str, sha256: str, size: int) -> Path:
    """The file of member ``name`` when the manifest's size and digest match it."""
    found = parcel.members.get(name)
    if found is None:
        raise ParcelError(f"the manifest names {name}, the parcel does not hold it")
    if found.size != size or found.sha256 != sha256:
        raise ParcelError(f"{name} does not match the manifest's size and sha256")
    return found.path


def check_complete(parcel: Parcel, named: Iterable[str]) -> None:
    """Every member is one the manifest names."""
    extra = sorted(set(parcel.members) - set(named))
    if extra:
        raise ParcelError(f"members the manifest does not name: {', '.join(extra[:5])}")
