"""A content-addressed artifact store: blobs named by their sha256, written once, never changed."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from contracts.common import ArtifactRef


class ArtifactNotFound(LookupError):
    pass


class ArtifactCorrupted(ValueError):
    pass


class LocalArtifactStore:
    """A folder of blobs fanned out by digest prefix (`ab/cdef…`). Production swaps in object storage."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, sha256: str) -> Path:
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise ArtifactNotFound(f"not a sha256 digest: {sha256!r}")
        return self.root / sha256[:2] / sha256[2:]

    def put(self, data: bytes, media_type: str) -> ArtifactRef:
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".incoming-")
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
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
