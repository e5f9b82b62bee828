"""The environment cache: one folder per digest (``<cache>/<digest>``), complete once its record is written,
published by a rename from a build folder beside it (same file system), and a lock file per digest so that two
processes (services, a CLI) never build the same digest at once: the second waits and then reuses the first's."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from libs.workspace_env.failure import EnvironmentUnavailable

RECORD = "modelguard-environment.json"
LOCK_POLL_S = 0.2


@dataclass(frozen=True)
class EnvironmentCache:
    folder: Path

    def root(self, digest: str) -> Path:
        return self.folder / digest

    def record(self, digest: str) -> dict[str, Any] | None:
        """The record of the complete environment ``digest``, or None when it is not built."""
        path = self.root(digest) / RECORD
        try:
            record: dict[str, Any] = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return record if record.get("digest") == digest else None

    @contextlib.contextmanager
    def locked(self, digest: str, timeout_s: float) -> Iterator[None]:
        """Hold the digest's lock; EnvironmentUnavailable when another build holds it longer than ``timeout_s``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.folder.chmod(0o755)
        deadline = time.monotonic() + timeout_s
        with open(self.folder / f"{digest}.lock", "a") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as error:
                    if error.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if time.monotonic() > deadline:
                        raise EnvironmentUnavailable(
                            f"another build of environment {digest[:12]} held its lock for over {timeout_s:.0f} s",
                            digest=digest,
                        ) from None
                    time.sleep(LOCK_POLL_S)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def build_folder(self, digest: str) -> Iterator[Path]:
        """A fresh folder beside the cache's environments, removed afterwards whatever happened."""
        folder = Path(tempfile.mkdtemp(prefix=f".building-{digest[:12]}-", dir=self.folder))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def publish(self, built: Path, digest: str, record: dict[str, Any]) -> Path:
        """Write the record into ``built``, make it readable by every uid (the sandbox's command runs as another
        one), and rename it to the digest's folder."""
        (built / RECORD).write_text(json.dumps({**record, "digest": digest}, indent=2, sort_keys=True) + "\n")
        readable_by_all(built)
        target = self.root(digest)
        if target.exists():  # a record-less leftover of a build that died after its rename: never complete
            shutil.rmtree(target)
        os.rename(built, target)
        return target


def readable_by_all(folder: Path) -> None:
    """Folders 0755, files readable (and executable where they were) by everyone, writable by none but the
    owner, no set-id bit; links left as they are."""
    for path, _, files in os.walk(folder):
        os.chmod(path, 0o755)
        for name in files:
            full = os.path.join(path, name)
            if not os.path.islink(full):
                mode = os.stat(full).st_mode
                os.chmod(full, (mode | 0o444 | (0o111 if mode & 0o100 else 0)) & 0o755)
