"""Whether a process has ended, as the folders and claims of a killed process are judged: a running process has
not, one that exited has, and so has a zombie (ended, its parent not having reaped it yet)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from libs.process_liveness import pid_namespace_inode, process_ended


def test_a_running_process_has_not_ended_and_one_reaped_has() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert not process_ended(child.pid) and not process_ended(os.getpid())
    finally:
        child.kill()
        child.wait()
    assert process_ended(child.pid)


def test_a_zombie_has_ended() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # exited, not reaped: a zombie until wait()
        with open(f"/proc/{child.pid}/stat") as stat:
            if stat.read().rsplit(") ", 1)[-1][:1] == "Z":
                break
        time.sleep(0.01)
    try:
        assert process_ended(child.pid)
    finally:
        child.wait()


def test_no_process_id_is_judged_ended_below_one_and_the_namespace_is_known_here() -> None:
    assert not process_ended(0) and not process_ended(-1)
    assert pid_namespace_inode() == os.stat("/proc/self/ns/pid").st_ino
