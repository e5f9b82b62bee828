"""Append and verify throughput of the ledger on a given database (`make bench`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from uuid import uuid4

from libs.events.codec import SignedEvent
from libs.ledger.store import LedgerStore
from libs.ledger.verify import verify_incident
from modelguard.synthetic_incidents import SampleKeys, abstained_incident, repaired_incident


@dataclass(frozen=True)
class BenchResult:
    backend: str
    events: int
    incidents: int
    append_per_s: float
    verify_per_s: float
    duplicate_append_per_s: float

    def __str__(self) -> str:
        return (
            f"ledger on {self.backend}: {self.events} events in {self.incidents} incidents; "
            f"append {self.append_per_s:,.0f}/s, duplicate append {self.duplicate_append_per_s:,.0f}/s, "
            f"verify {self.verify_per_s:,.0f}/s"
        )


def bench_ledger(url: str, n: int = 2000) -> BenchResult:
    """Append about `n` freshly signed events (incidents of 6 and 3 events) to the ledger at `url`, then
    verify those incidents. Works on a ledger that already holds events: the incidents are new."""
    keys, run = SampleKeys.generate(), uuid4().hex[:12]
    incidents: list[list[SignedEvent]] = []
    while sum(map(len, incidents)) < n:
        i = len(incidents)
        build = repaired_incident if i % 3 else abstained_incident
        incidents.append(build(keys, f"bench-{run}-{i}"))
    events = [e for chain in incidents for e in chain]
    with LedgerStore(url) as store:
        store.create_schema()
        started = time.perf_counter()
        for signed in events:
            store.append(signed)
        appended = time.perf_counter() - started
        started = time.perf_counter()
        for signed in events[:200]:
            store.append(signed)
        duplicates = time.perf_counter() - started
        started = time.perf_counter()
        reports = [verify_incident(store, chain[0].event.meta.incident_id, keys.registry) for chain in incidents]
        verified = time.perf_counter() - started
        if not all(r.ok for r in reports):
            raise RuntimeError(f"benchmark ledger does not verify: {[r for r in reports if not r.ok][:1]}")
        return BenchResult(
            backend=store.backend,
            events=len(events),
            incidents=len(incidents),
            append_per_s=len(events) / appended,
            verify_per_s=len(events) / verified,
            duplicate_append_per_s=min(200, len(events)) / duplicates,
        )


if __name__ == "__main__":
    import sys

    print(bench_ledger(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2000))
