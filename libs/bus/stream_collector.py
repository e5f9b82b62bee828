"""The garbage collector set for a service that reads a stream of external records (the context service's MCL
intake, thousands of records a second).

Each record decoded makes a few dozen short-lived dicts and lists. At CPython's default thresholds (700, 10, 10)
the young generation is collected every 700 allocations, and as the mirror's state grows the whole heap (the
acryl-datahub classes, the mirror's indexes, all alive for the life of the process) is walked again and again.
On the MCL benchmark stream in process (60,000 records) the collector took about 360 ms at the defaults, about
190 ms with the objects built at start frozen, and 50-90 ms with them frozen and the young generation collected
every 20,000 allocations; over the embedded broker the context service went from 14.0-14.4k to 15.8-16.8k msg/s
(100,000 records, alternating runs).

`gc.freeze` moves every object alive at that moment to a generation the collector never walks: the imports and
the state the service's bootstrap loaded. A cycle among them is never freed, and none is meant to be: they live as
long as the process. Garbage is collected first, so none of it is frozen.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000
"""Allocations (less deallocations) between collections of the young generation; CPython's default is 700."""
MIDDLE_THRESHOLD = 20
"""Young collections between collections of the middle generation; CPython's default is 10."""


def settle_collector_for_streams() -> None:
    """Collect, freeze what is alive, and collect the young generation less often (see the module's text)."""
    gc.collect()
    gc.freeze()
    _, _, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, oldest)
