"""CPU time of running processes, read from ``/proc``: what a benchmark charges to ModelGuard's own services.

A process's own user and system time, all its threads, not its children's: a service's workspace commands run as
child processes and are counted apart (their spans carry the CPU time the sandbox measured).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of ``pid`` so far; None when it cannot be read (gone, or no ``/proc``)."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def cpu_readings(pids: Mapping[str, int | None]) -> dict[str, float | None]:
    return {name: cpu_seconds(pid) for name, pid in pids.items()}


@dataclass(frozen=True)
class CpuSpent:
    """CPU seconds each named process spent between two readings; None where either reading failed (a process
    restarted in between has a new pid and is not measured)."""

    by_name: dict[str, float | None]

    @classmethod
    def between(cls, before: Mapping[str, float | None], after: Mapping[str, float | None]) -> CpuSpent:
        spent: dict[str, float | None] = {}
        for name, first in before.items():
            last = after.get(name)
            spent[name] = None if first is None or last is None else last - first
        return cls(spent)

    @property
    def total_s(self) -> float:
        return sum(s for s in self.by_name.values() if s is not None)

    @property
    def unmeasured(self) -> list[str]:
        return [name for name, s in self.by_name.items() if s is None]
