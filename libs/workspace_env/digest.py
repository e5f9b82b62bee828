"""The digest an environment is built and cached under: the declaration files, the interpreter it is built on,
where its packages come from and how they are installed. Two revisions with the same declaration share one
environment; anything that could change what gets installed makes a new one."""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from libs.canonical_json import canonical_bytes
from libs.workspace_env.declaration import Declaration

FORMAT = 1
"""Raised when the layout or the install rules of a built environment change."""


@dataclass(frozen=True)
class PackageSource:
    """Where packages come from, as it enters the digest: the index URL without credentials, or the wheelhouse's
    folder and the names and sizes of the files in it."""

    index_url: str | None
    wheelhouse: Path | None = None
    wheelhouse_listing: str = ""


def without_credentials(url: str) -> str:
    """``url`` with any ``user:password@`` removed: what may be logged and digested."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def wheelhouse_listing(folder: Path) -> str:
    """sha256 of the sorted names and sizes of the files in ``folder``: a wheel added or replaced changes it."""
    entries = sorted(f"{entry.name}\t{entry.stat().st_size}" for entry in os.scandir(folder) if entry.is_file())
    return hashlib.sha256("\n".join(entries).encode()).hexdigest()


def package_source(index_url: str, wheelhouse: Path | None) -> PackageSource:
    if wheelhouse is not None:
        return PackageSource(None, wheelhouse, wheelhouse_listing(wheelhouse))
    return PackageSource(without_credentials(index_url))


def interpreter_identity() -> dict[str, str]:
    """The base interpreter every workspace environment is built on: ModelGuard's own."""
    return {
        "implementation": sys.implementation.name,
        "version": ".".join(str(part) for part in sys.version_info[:3]),
        "abi": sys.abiflags,
        "machine": platform.machine(),
        "base": os.path.realpath(sys.base_prefix),
    }


def environment_digest(
    declaration: Declaration, source: PackageSource, uv_version: str, harness: tuple[str, ...] = ()
) -> str:
    document = {
        "format": FORMAT,
        "kind": declaration.kind,
        "files": {file.name: file.sha256 for file in declaration.files},
        "interpreter": interpreter_identity(),
        "source": {
            "index_url": source.index_url,
            "wheelhouse": str(source.wheelhouse) if source.wheelhouse is not None else None,
            "wheelhouse_listing": source.wheelhouse_listing,
        },
        "install": {"only_binary": True, "uv": uv_version, "harness": list(harness)},
    }
    return hashlib.sha256(canonical_bytes(document)).hexdigest()
