"""A content-addressed artifact store: blobs named by their sha256, written once, never changed.

The port is ``ArtifactStore``; its adapters are a local folder (``LocalArtifactStore``, the default) and object
storage over the S3 API (``libs/artifacts/s3_store.py``), chosen by ``artifact_store`` (``open_store.py``). Both
check every blob they read against its name: a changed byte is refused, never handed on.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Protocol

from contracts.common import ArtifactRef
from libs.atomic_file import atomic_write


class ArtifactNotFound(LookupError):
    pass


class ArtifactCorrupted(ValueError):
    pass


class ArtifactStoreUnavailable(RuntimeError):
    """The store did not answer or refused us (object storage unreachable, throttled, denied): worth a retry."""


class ArtifactStore(Protocol):
    def put(self, data: bytes, media_type: str) -> ArtifactRef:
        """Store ``data`` under its sha256 (a blob already there is left as it is)."""
        ...

    def get(self, ref: ArtifactRef | str) -> bytes:
        """The blob's bytes, checked against its digest (ArtifactCorrupted otherwise; ArtifactNotFound)."""
        ...

    def exists(self, sha256: str) -> bool: ...

    def describe(self) -> str:
        """Where the blobs are, for a log line or a message (no credentials)."""
        ...


def checked_digest(sha256: str) -> str:
    """``sha256`` when it is 64 lower-case hex digits (a blob's name); ArtifactNotFound otherwise."""
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ArtifactNotFound(f"not a sha256 digest: {sha256!r}")
    return sha256


def digest_of(ref: ArtifactRef | str) -> str:
    return checked_digest(ref if isinstance(ref, str) else ref.sha256)


class LocalArtifactStore:
    """A folder of blobs fanned out by digest prefix (`ab/cdef…`)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def describe(self) -> str:
        return str(self.root)

    def _path(self, sha256: str) -> Path:
        checked_digest(sha256)
        return self.root / sha256[:2] / sha256[2:]

    def put(self, data: bytes, media_type: str) -> ArtifactRef:
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if not path.exists():
            atomic_write(path, data)
        return ArtifactRef(sha256=digest, media_type=media_type, size=len(data))

    def get(self, ref: ArtifactRef | str) -> bytes:
        digest = ref if isinstance(ref, str) else ref.sha256
        path = self._path(digest)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ArtifactNotFound(f"artifact {digest} is not in {self.root}") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise ArtifactCorrupted(f"artifact {digest} does not match its digest")
        return data

    def exists(self, sha256: str) -> bool:
        return self._path(sha256).exists()
