"""How many CPUs this process may run on: the bound for evaluations run at once (the detector's referee, the
diagnoser's trials)."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
