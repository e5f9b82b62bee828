"""The ledger beside eventsourcing (pyeventsourcing/eventsourcing, its SQLite recorder), same events, same machine,
one run: append at 1 and at 10 events per transaction, read one aggregate's events, and ModelGuard's verify.

Both sides store the same bytes: ModelGuard appends signed envelopes (hash-chained per incident as it appends);
eventsourcing stores each envelope as a StoredEvent's state under the incident's aggregate id. Events are made once
per round, before any clock starts, and each round measures both sides, so neither gets the quieter machine; the
figure is the median of the rounds. Without eventsourcing installed (`pip install eventsourcing`), only
ModelGuard's figures are printed.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from libs.events.codec import SignedEvent
from libs.ledger.store import LedgerStore
from libs.ledger.verify import verify_all
from modelguard.synthetic_incidents import SampleKeys, repaired_incident

ROUNDS = 3


@dataclass(frozen=True)
class PeerFigures:
    name: str
    modelguard: float
    peer: float | None

    def line(self) -> str:
        mine = f"{self.name:<30} ModelGuard {self.modelguard:>8,.0f}/s"
        if self.peer is None:
            return mine
        return f"{mine}   eventsourcing {self.peer:>8,.0f}/s   {self.modelguard / self.peer:.2f}x"


def _incidents(n: int) -> tuple[SampleKeys, list[list[SignedEvent]]]:
    keys, run = SampleKeys.generate(), uuid.uuid4().hex[:8]
    incidents: list[list[SignedEvent]] = []
    while sum(map(len, incidents)) < n:
        incidents.append(repaired_incident(keys, f"peer-{run}-{len(incidents)}"))
    return keys, incidents


def _store(folder: Path) -> LedgerStore:
    store = LedgerStore(f"sqlite:///{folder / f'modelguard-{uuid.uuid4().hex}.db'}")
    store.create_schema()
    return store


def _append_rate(folder: Path, events: list[SignedEvent], per_transaction: int) -> float:
    with _store(folder) as store:
        started = time.perf_counter()
        for i in range(0, len(events), per_transaction):
            store.append_batch(events[i : i + per_transaction])
        return len(events) / (time.perf_counter() - started)


def _read_and_verify_rates(folder: Path, keys: SampleKeys, incidents: list[list[SignedEvent]]) -> tuple[float, float]:
    with _store(folder) as store:
        for chain in incidents:
            store.append_batch(chain)
        started = time.perf_counter()
        read = sum(len(store.incident_events(chain[0].event.meta.incident_id)) for chain in incidents)
        read_rate = read / (time.perf_counter() - started)
        started = time.perf_counter()
        reports = verify_all(store, keys.registry)
        verify_rate = sum(map(len, incidents)) / (time.perf_counter() - started)
        if not all(r.ok for r in reports):
            raise RuntimeError("the benchmark ledger does not verify")
        return read_rate, verify_rate


def _peer_recorder() -> Callable[[Path], Any] | None:
    try:
        from eventsourcing.sqlite import SQLiteAggregateRecorder, SQLiteDatastore
    except ImportError:
        return None

    def recorder(folder: Path) -> Any:
        datastore = SQLiteDatastore(str(folder / f"eventsourcing-{uuid.uuid4().hex}.db"), originator_id_type="text")
        made = SQLiteAggregateRecorder(datastore)
        made.create_table()
        return made

    return recorder


def _stored(incidents: list[list[SignedEvent]]) -> list[list[Any]]:
    from eventsourcing.persistence import StoredEvent

    return [
        [
            StoredEvent(
                originator_id=chain[0].event.meta.incident_id,
                originator_version=i + 1,
                topic=f"modelguard:{e.event.meta.event_type}",
                state=e.envelope_bytes,
            )
            for i, e in enumerate(chain)
        ]
        for chain in incidents
    ]


def _peer_append_rate(recorder: Any, stored: Sequence[Any], per_transaction: int) -> float:
    started = time.perf_counter()
    for i in range(0, len(stored), per_transaction):
        recorder.insert_events(list(stored[i : i + per_transaction]))
    return len(stored) / (time.perf_counter() - started)


def _peer_read_rate(recorder: Any, stored: list[list[Any]]) -> float:
    for chain in stored:
        recorder.insert_events(chain)
    started = time.perf_counter()
    read = sum(len(recorder.select_events(chain[0].originator_id)) for chain in stored)
    return read / (time.perf_counter() - started)


def bench_ledger_against_eventsourcing(n: int = 2000, rounds: int = ROUNDS) -> list[PeerFigures]:
    peer = _peer_recorder()
    mine: dict[str, list[float]] = {}
    theirs: dict[str, list[float]] = {}
    for _ in range(rounds):
        keys, incidents = _incidents(n)
        events = [e for chain in incidents for e in chain]
        stored = _stored(incidents) if peer else []
        flat_stored = [s for chain in stored for s in chain]
        with tempfile.TemporaryDirectory(prefix="modelguard-ledger-peer-") as scratch:
            folder = Path(scratch)
            for size in (1, 10):
                name = f"append, {size} per transaction"
                mine.setdefault(name, []).append(_append_rate(folder, events, size))
                if peer:
                    theirs.setdefault(name, []).append(_peer_append_rate(peer(folder), flat_stored, size))
            read_rate, verify_rate = _read_and_verify_rates(folder, keys, incidents)
            mine.setdefault("read an incident's events", []).append(read_rate)
            if peer:
                theirs.setdefault("read an incident's events", []).append(_peer_read_rate(peer(folder), stored))
            mine.setdefault("verify (signature + chain)", []).append(verify_rate)
    return [
        PeerFigures(name, statistics.median(rates), statistics.median(theirs[name]) if name in theirs else None)
        for name, rates in mine.items()
    ]


if __name__ == "__main__":
    for figures in bench_ledger_against_eventsourcing():
        print(figures.line())
