"""The ledger beside eventsourcing (pyeventsourcing/eventsourcing, its SQLite recorder), same events, same machine,
one run: append at 1 and at 10 events per transaction, read one aggregate's events, bytes on disk per event, and
ModelGuard's verify beside the machine's Ed25519 limit.

Both sides store the same bytes and both commit durably: ModelGuard appends signed envelopes, hash-chained per
incident as it appends, to SQLite in WAL mode with synchronous=FULL (`libs/ledger/sqlite_writer.py`); eventsourcing
stores each envelope as a StoredEvent's state under the incident's aggregate id, with its datastore's defaults (WAL,
SQLite's default synchronous, FULL). Events (and the peer's StoredEvents) are made once per round before any clock
starts. A shared machine's disk and CPU change speed from one second to the next, so the two sides take turns in
short slices (ten transactions, twenty incidents read), the side that goes first alternating, each side's clock
running only through its own slices; each round uses fresh files. A figure is the median over the rounds, a ratio
the median of the rounds' ratios, each with its range. Without eventsourcing installed (`pip install '.[bench]'`),
only ModelGuard's figures are printed.
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

Step = Callable[[], int]
"""One transaction or one read, returning how many events it took."""
ROUNDS = 5
EVENTS = 2000
SINGLE_EVENTS = 600
"""At one event per transaction each append waits for the disk; fewer events keep a round short."""
SLICE = 10
"""Steps (transactions, incident reads) per turn: each side's work comes in turns this long, alternating."""


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


def _interleaved(mine: Sequence[Step], theirs: Sequence[Step], slice_: int = SLICE) -> tuple[float, float | None]:
    """Both sides' steps slice by slice, the side that goes first alternating, each side's clock running through its
    own slices only; per side, what its steps counted per second (None for the peer without steps)."""
    sides, spent, done = (list(mine), list(theirs)), [0.0, 0.0], [0, 0]
    for turn, start in enumerate(range(0, max(len(mine), len(theirs)), slice_)):
        for side in (0, 1) if turn % 2 == 0 else (1, 0):
            began = time.perf_counter()
            for step in sides[side][start : start + slice_]:
                done[side] += step()
            spent[side] += time.perf_counter() - began
    return done[0] / spent[0], (done[1] / spent[1] if theirs else None)


def _append(store: LedgerStore, events: Sequence[SignedEvent]) -> int:
    store.append_batch(events)
    return len(events)


def _read(store: LedgerStore, incident_id: str) -> int:
    return len(store.incident_events(incident_id))


def _verify_rate(store: LedgerStore, keys: SampleKeys, events: int, workers: int | None = None) -> float:
    started = time.perf_counter()
    reports = verify_all(store, keys.registry, workers=workers)
    rate = events / (time.perf_counter() - started)
    if not all(r.ok for r in reports) or sum(r.events_checked for r in reports) != events:
        raise RuntimeError("the benchmark ledger does not verify")
    return rate


def _ed25519_rate(events: Sequence[SignedEvent], keys: SampleKeys) -> float:
    """Signature checks alone (the check verify makes: `libs/signing/ed25519_check.py`), in this process: what one
    core can verify at best."""
    checks = []
    for signed in events:
        envelope = DsseEnvelope.model_validate_json(signed.envelope_bytes)
        registered = keys.registry.get(envelope.signatures[0].keyid)
        assert registered is not None
        message = pae(envelope.payloadType, base64.b64decode(envelope.payload))
        checks.append((registered, base64.b64decode(envelope.signatures[0].sig), message))
    started = time.perf_counter()
    held = sum(registered.verifies(signature, message) for registered, signature, message in checks)
    rate = len(checks) / (time.perf_counter() - started)
    if held != len(checks):
        raise RuntimeError("a benchmark signature does not verify")
    return rate


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


def _peer_append(recorder: Any, stored: Sequence[Any]) -> int:
    recorder.insert_events(list(stored))
    return len(stored)


def _peer_read(recorder: Any, incident_id: str) -> int:
    return len(recorder.select_events(incident_id))


def _record(figure: Figure, rates: tuple[float, float | None]) -> None:
    figure.modelguard.append(rates[0])
    if rates[1] is not None:
        figure.peer.append(rates[1])


def bench_ledger_against_eventsourcing(n: int = EVENTS, rounds: int = ROUNDS) -> list[Figure]:
    peer = _peer_recorder()
    single, batched = Figure("append, 1 per transaction"), Figure("append, 10 per transaction")
    read, size = Figure("read an incident's events"), Figure("bytes on disk per event", "B", higher_is_better=False)
    verify, verify_one, limit = (
        Figure(f"verify (signature + chain), {os.cpu_count()} cores"),
        Figure("verify, one process"),
        Figure("Ed25519 verify alone, one core"),
    )
    for _ in range(rounds):
        keys, incidents = _incidents(n)
        events = [e for chain in incidents for e in chain]
        stored = _stored(incidents) if peer else []
        flat = [s for chain in stored for s in chain]
        with tempfile.TemporaryDirectory(prefix="modelguard-ledger-peer-") as scratch:
            folder = Path(scratch)
            for figure, count, per in ((single, SINGLE_EVENTS, 1), (batched, len(events), 10)):
                with _store(_database(folder, "modelguard")) as store:
                    recorder = peer(_database(folder, "peer")) if peer else None
                    mine = [partial(_append, store, events[i : i + per]) for i in range(0, count, per)]
                    theirs = [partial(_peer_append, recorder, flat[i : i + per]) for i in range(0, count, per)]
                    _record(figure, _interleaved(mine, theirs if recorder else []))
            path = _database(folder, "modelguard")
            with _store(path) as store:
                for chain in incidents:
                    store.append_batch(chain)
                size.modelguard.append(_bytes_per_event(path, len(events)))
                ids = [chain[0].event.meta.incident_id for chain in incidents]
                reads: list[Step] = []
                if peer:
                    peer_path = _database(folder, "peer")
                    recorder = peer(peer_path)
                    for chain in stored:
                        recorder.insert_events(chain)
                    size.peer.append(_bytes_per_event(peer_path, len(events)))
                    reads = [partial(_peer_read, recorder, i) for i in ids]
                _record(read, _interleaved([partial(_read, store, i) for i in ids], reads, 2 * SLICE))
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
