"""The ledger beside eventsourcing (pyeventsourcing/eventsourcing, its SQLite recorder), same events, same machine,
one run: append at 1 and at 10 events per transaction, read one aggregate's events, bytes on disk per event, and
ModelGuard's verify beside the machine's Ed25519 limit.

Both sides store the same bytes and both commit durably: ModelGuard appends signed envelopes, hash-chained per
incident as it appends, to SQLite in WAL mode with synchronous=FULL (`libs/ledger/sqlite_writer.py`); eventsourcing
stores each envelope as a StoredEvent's state under the incident's aggregate id, with its datastore's defaults (WAL,
SQLite's default synchronous, FULL). Events (and the peer's StoredEvents) are made once per round before any clock
starts. Each round measures both sides back to back on fresh files, the side that goes first alternating, so neither
gets the quieter machine; a figure is the median over the rounds, a ratio the median of the rounds' ratios, each
with its range. Without eventsourcing installed (`pip install '.[bench]'`), only ModelGuard's figures are printed.
"""

from __future__ import annotations

import argparse
import base64
import os
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from contracts.envelope import DsseEnvelope, pae
from libs.events.codec import SignedEvent
from libs.ledger.store import LedgerStore
from libs.ledger.verify import verify_all
from modelguard.synthetic_incidents import SampleKeys, repaired_incident

ROUNDS = 5
EVENTS = 2000
SINGLE_EVENTS = 300
"""At one event per transaction each append waits for the disk; fewer events keep a round short."""


@dataclass
class Figure:
    name: str
    unit: str = "/s"
    modelguard: list[float] = field(default_factory=list)
    peer: list[float] = field(default_factory=list)
    higher_is_better: bool = True

    def line(self) -> str:
        mine = f"{self.name:<34} ModelGuard {_figure(self.modelguard, self.unit)}"
        if not self.peer:
            return mine
        ratios = [m / p if self.higher_is_better else p / m for m, p in zip(self.modelguard, self.peer, strict=True)]
        return (
            f"{mine}   eventsourcing {_figure(self.peer, self.unit)}   "
            f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        )


def _figure(values: list[float], unit: str) -> str:
    return f"{statistics.median(values):>9,.0f}{unit} ({min(values):,.0f}-{max(values):,.0f})"


def _incidents(n: int) -> tuple[SampleKeys, list[list[SignedEvent]]]:
    keys, run = SampleKeys.generate(), uuid.uuid4().hex[:8]
    incidents: list[list[SignedEvent]] = []
    while sum(map(len, incidents)) < n:
        incidents.append(repaired_incident(keys, f"peer-{run}-{len(incidents)}"))
    return keys, incidents


def _database(folder: Path, side: str) -> Path:
    return folder / f"{side}-{uuid.uuid4().hex}.db"


def _store(path: Path) -> LedgerStore:
    store = LedgerStore(f"sqlite:///{path}")
    store.create_schema()
    return store


def _bytes_per_event(path: Path, events: int) -> float:
    """The database file once its write-ahead log is folded in, per event."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size / events


def _append_rate(folder: Path, events: Sequence[SignedEvent], per_transaction: int) -> float:
    with _store(_database(folder, "modelguard")) as store:
        started = time.perf_counter()
        for i in range(0, len(events), per_transaction):
            store.append_batch(events[i : i + per_transaction])
        return len(events) / (time.perf_counter() - started)


def _read_rate(store: LedgerStore, incidents: list[list[SignedEvent]]) -> float:
    started = time.perf_counter()
    read = sum(len(store.incident_events(chain[0].event.meta.incident_id)) for chain in incidents)
    return read / (time.perf_counter() - started)


def _verify_rate(store: LedgerStore, keys: SampleKeys, events: int, workers: int | None = None) -> float:
    started = time.perf_counter()
    reports = verify_all(store, keys.registry, workers=workers)
    rate = events / (time.perf_counter() - started)
    if not all(r.ok for r in reports) or sum(r.events_checked for r in reports) != events:
        raise RuntimeError("the benchmark ledger does not verify")
    return rate


def _ed25519_rate(events: Sequence[SignedEvent], keys: SampleKeys) -> float:
    """Signature checks alone, in this process: what one core can verify at best."""
    checks = []
    for signed in events:
        envelope = DsseEnvelope.model_validate_json(signed.envelope_bytes)
        registered = keys.registry.get(envelope.signatures[0].keyid)
        assert registered is not None
        message = pae(envelope.payloadType, base64.b64decode(envelope.payload))
        checks.append((registered.public_key, base64.b64decode(envelope.signatures[0].sig), message))
    started = time.perf_counter()
    for public_key, signature, message in checks:
        public_key.verify(signature, message)
    return len(checks) / (time.perf_counter() - started)


def _peer_recorder() -> Callable[[Path], Any] | None:
    try:
        from eventsourcing.sqlite import SQLiteAggregateRecorder, SQLiteDatastore
    except ImportError:
        return None

    def recorder(path: Path) -> Any:
        made = SQLiteAggregateRecorder(SQLiteDatastore(str(path), originator_id_type="text"))
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
    started = time.perf_counter()
    read = sum(len(recorder.select_events(chain[0].originator_id)) for chain in stored)
    return read / (time.perf_counter() - started)


def _both(first_is_mine: bool, mine: Callable[[], float], theirs: Callable[[], float]) -> tuple[float, float]:
    if first_is_mine:
        m = mine()
        return m, theirs()
    t = theirs()
    return mine(), t


def bench_ledger_against_eventsourcing(n: int = EVENTS, rounds: int = ROUNDS) -> list[Figure]:
    peer = _peer_recorder()
    single, batched = Figure("append, 1 per transaction"), Figure("append, 10 per transaction")
    read, size = Figure("read an incident's events"), Figure("bytes on disk per event", "B", higher_is_better=False)
    verify, verify_one, limit = (
        Figure(f"verify (signature + chain), {os.cpu_count()} cores"),
        Figure("verify, one process"),
        Figure("Ed25519 verify alone, one core"),
    )
    for round_ in range(rounds):
        mine_first = round_ % 2 == 0
        keys, incidents = _incidents(n)
        events = [e for chain in incidents for e in chain]
        stored = _stored(incidents) if peer else []
        flat = [s for chain in stored for s in chain]
        with tempfile.TemporaryDirectory(prefix="modelguard-ledger-peer-") as scratch:
            folder = Path(scratch)
            for figure, count, per in ((single, SINGLE_EVENTS, 1), (batched, len(events), 10)):
                mine = partial(_append_rate, folder, events[:count], per)
                if peer:
                    theirs = partial(_peer_append_rate, peer(_database(folder, "peer")), flat[:count], per)
                    m, t = _both(mine_first, mine, theirs)
                    figure.peer.append(t)
                else:
                    m = mine()
                figure.modelguard.append(m)
            path = _database(folder, "modelguard")
            with _store(path) as store:
                for chain in incidents:
                    store.append_batch(chain)
                size.modelguard.append(_bytes_per_event(path, len(events)))
                if peer:
                    peer_path = _database(folder, "peer")
                    recorder = peer(peer_path)
                    for chain in stored:
                        recorder.insert_events(chain)
                    size.peer.append(_bytes_per_event(peer_path, len(events)))
                    m, t = _both(
                        mine_first, partial(_read_rate, store, incidents), partial(_peer_read_rate, recorder, stored)
                    )
                    read.peer.append(t)
                else:
                    m = _read_rate(store, incidents)
                read.modelguard.append(m)
                verify.modelguard.append(_verify_rate(store, keys, len(events)))
                verify_one.modelguard.append(_verify_rate(store, keys, len(events), workers=1))
            limit.modelguard.append(_ed25519_rate(events, keys))
    return [single, batched, read, size, verify, verify_one, limit]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m modelguard.bench_ledger_peer", description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=EVENTS, help="events per round (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds (default %(default)s)")
    options = parser.parse_args(argv)
    print(f"ledger beside eventsourcing: {options.rounds} rounds of {options.events} events (median, range)")
    for figure in bench_ledger_against_eventsourcing(options.events, options.rounds):
        print(figure.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
