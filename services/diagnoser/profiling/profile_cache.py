"""Column profiles kept by the bytes of the CSV they were made from: the approval window is the same file for every
incident of a model (and an incident reported again brings the same incident window), and profiling a window's
columns was about half of the diagnoser's own work on the data (~150 ms per window pair on the churn scenario).

The key is the file's SHA-256 with the profiling thresholds; profiling is a function of the cells alone, so a hit
is the profile a fresh run would make. Each caller gets its own deep copy (a profile holds dicts). The last
``CAPACITY`` files are kept, in this process only.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from services.diagnoser.profiling.column_profile import ColumnProfile

CAPACITY = 16
Profiles = dict[str, ColumnProfile]


class ProfileCache:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._kept: OrderedDict[tuple[str, float, int], Profiles] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def profiles(
        self, path: Path, numeric_parse_rate: float, max_categories: int, make: Callable[[], Profiles]
    ) -> Profiles:
        """The profiles of the CSV at ``path``: kept ones when its bytes were profiled with these thresholds,
        else ``make()``'s, then kept."""
        key = (hashlib.sha256(Path(path).read_bytes()).hexdigest(), numeric_parse_rate, max_categories)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                self.hits += 1
        if kept is None:
            kept = make()
            with self._lock:
                self.misses += 1
                self._kept[key] = kept
                while len(self._kept) > self._capacity:
                    self._kept.popitem(last=False)
        return copy.deepcopy(kept)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self.hits = self.misses = 0


WINDOW_PROFILES = ProfileCache()
"""The diagnoser process's profiles (``profile_windows``)."""
