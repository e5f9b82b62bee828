"""The garbage collector set for a service process: what it built at start frozen out of the collector's walks, and
the young generation collected every 20,000 allocations instead of CPython's 700.

A service lives long and allocates in bursts: the context service decodes thousands of MCL records a second, each
a few dozen short-lived dicts and lists; the diagnoser parses sources and frames per incident. At the default
thresholds (700, 10, 10) the young generation is collected every 700 allocations, and the whole heap (the
acryl-datahub classes, the mirror's indexes, the imported libraries, all alive for the life of the process) is
walked again and again. Measured:

- the MCL intake in process, 60,000 records: the collector took about 360 ms at the defaults, about 190 ms with
  the objects built at start frozen, 50-90 ms with them frozen and the young generation collected every 20,000
  allocations; over the embedded broker the context service went from 14.0-14.4k to 15.8-16.8k msg/s (100,000
  records, alternating runs);
- `modelguard bench pipeline --incidents 10` (fourteen incidents): the collector's time in each service, two runs
  each: diagnoser 210 and 253 ms at the defaults, 23 and 12 ms set; ledger 189 and 170, 0; repairer 29 and 38,
  12 and 13; validator 17 and 22, 3 and 4; detector and publisher 7-15, 0.

`gc.freeze` moves every object alive at that moment to a generation the collector never walks. A cycle among them
is never freed, and none is meant to be: they live as long as the process. Garbage is collected first, so none of
it is frozen.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000
"""Allocations (less deallocations) between collections of the young generation; CPython's default is 700."""
MIDDLE_THRESHOLD = 20
"""Young collections between collections of the middle generation; CPython's default is 10."""


def settle_collector() -> None:
    """Collect, freeze what is alive, and collect the young generation less often (see the module's text)."""
    gc.collect()
    gc.freeze()
    _, _, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, oldest)
