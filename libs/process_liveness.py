"""Whether a process of this PID namespace has ended, asked of the kernel without signalling it, and which PID
namespace this is (two processes in the same one see each other's ids)."""

from __future__ import annotations

import os


def process_ended(pid: int) -> bool:
    """True when no process `pid` runs in this PID namespace any more: none has the id, or it is a zombie (ended,
    not yet reaped by its parent). A process of another user runs; so does one whose state cannot be read."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(") ", 1)[-1][:1] == "Z"
    except OSError:
        return False


def pid_namespace_inode() -> int:
    """The inode of this process's PID namespace; 0 when it cannot be read (then no process id can be judged)."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0
