"""The sha256 of a file read before, taken again without reading it while the kernel says the file is unchanged.

The sandbox hashes a command's working tree before and after the command, and a service runs several commands on
one tree: a 1,673-file, 45 MB tree took 73 ms a hash here, against about 10 ms to look at every file's status.
So a digest is kept with the file's identity and status when it was read, and given again while they are the same:

- **identity**: the device and inode. A file replaced (renamed over, deleted and created) is another inode, or the
  same number with a new change time.
- **status**: size, modification time, and the change time (``st_ctime``). The kernel sets the change time to the
  current time at every change of the file's content or metadata, and no call sets it to a chosen value (``utime``
  sets the modification time, and so changes the change time itself). A write after the file was read leaves a
  change time later than the one kept, so the status differs and the file is read again.
- **settled**: the kernel's clock for these times is coarse (it moves once per tick, 1-10 ms). A write in the same
  tick as the change before the reading could leave the change time as it was; so a digest is kept only when the
  file's change time is at least ``settled_ns`` (100 ms) older than the moment the reading began, and then any later
  change gives a later time. A file changed more recently is read every time, as git does with its "racily clean"
  entries. The status is taken from the open file before and after the reading; a file that changed meanwhile is
  not kept either.

What this does not see: a change that the kernel does not time, such as writes to the block device under the file
system, a clock set back by the machine's administrator, or a file system that does not keep change times (a
network file system's cached attributes). Only trees on the service's own local scratch space, written by
ModelGuard and read by commands that see them read-only, are hashed through it (`libs/sandbox/run.py`, the
validator's copy); the remote runner and a Job read their trees in full every time.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
import time
from collections.abc import Callable

SETTLED_NS = 100_000_000
"""How long before a reading a file's last change must be for its digest to be kept (well over a clock tick)."""
LIMIT = 100_000
"""Files kept at most (about 200 bytes each); past it the oldest half is forgotten."""

_Status = tuple[int, int, int]
"""Size, modification time, change time (ns)."""


def _status(found: os.stat_result) -> _Status:
    return found.st_size, found.st_mtime_ns, found.st_ctime_ns


class KnownDigests:
    def __init__(
        self, *, settled_ns: int = SETTLED_NS, limit: int = LIMIT, clock: Callable[[], int] = time.time_ns
    ) -> None:
        self._settled_ns = settled_ns
        self._limit = limit
        self._clock = clock
        self._kept: dict[tuple[int, int], tuple[_Status, str]] = {}
        self._lock = threading.Lock()
        self.read = 0
        """Files read (for tests and benchmarks): a digest given again is not counted."""

    def digest(self, path: str) -> str:
        """The sha256 (hex) of the regular file at ``path``."""
        found = os.lstat(path)
        if stat.S_ISREG(found.st_mode):
            kept = self._kept.get((found.st_dev, found.st_ino))
            if kept is not None and kept[0] == _status(found):
                return kept[1]
        return self._read(path)

    def _read(self, path: str) -> str:
        began = self._clock()
        with open(path, "rb") as handle:
            opened = os.fstat(handle.fileno())
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
            closing = os.fstat(handle.fileno())
        self.read += 1
        status = _status(opened)
        settled = opened.st_ctime_ns < began - self._settled_ns
        if stat.S_ISREG(opened.st_mode) and status == _status(closing) and settled:
            with self._lock:
                if len(self._kept) >= self._limit:
                    for key in list(self._kept)[: self._limit // 2]:
                        del self._kept[key]
                self._kept[(opened.st_dev, opened.st_ino)] = (status, digest)
        return digest


LOCAL_TREES = KnownDigests()
"""This process's digests of the working trees on its local scratch space that its confined commands read."""
