"""ModelGuard's context service beside datahub-actions on one broker and one MCL stream: broker → handled, msg/s.

Each round gives each side fresh topics on the same embedded broker (Tansu), fills them with the same stream
(:func:`benchmarks.mcl_workload.burst_stream`, produced before any clock starts: the consumers read a backlog),
and runs:

- **ModelGuard**: the context service as ``modelguard stack`` starts it (its own process, the batch consumer,
  the schema registry over HTTP, every record validated, the mirror on SQLite, state and offsets committed per
  batch), its clock from the first batch it committed to the last, read from the mirror's counters (watched from
  before the service starts: it consumes before the stack reports it ready);
- **datahub-actions (all)**: its own pipeline with a Kafka source and an action that counts
  (:mod:`benchmarks.datahub_actions_peer`), its clock from the first event its action received to the last;
- **datahub-actions (filtered)**: the same with an ``event_type`` filter on the aspects ModelGuard mirrors.

The order of the sides alternates from round to round, so neither always gets the quieter machine. The figure
is records over seconds between the first and the last handled (the records of the first batch left out of
ModelGuard's count, the first event of the peer's).
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from aiokafka import AIOKafkaProducer

from benchmarks.mcl_workload import TIMESERIES, VERSIONED, MclStream
from libs.bus.topics import ensure_topics
from libs.datahub.mcl.prefilter import mirrored_aspects
from libs.settings import load_settings
from modelguard.process_cpu import cpu_seconds
from modelguard.stack import REPO_ROOT, read_state, stack_down, stack_up
from services.context.intake_counts import IntakeCounts

PARTITIONS = 3
SIDE_TIMEOUT_S = 900.0
POLL_S = 0.02
FIRST_POLL_S = 0.005
MODELGUARD, PEER_ALL, PEER_FILTERED = "modelguard", "datahub-actions (all)", "datahub-actions (filtered)"


@dataclass(frozen=True)
class SideRun:
    side: str
    round: int
    records: int
    seconds: float
    cpu_seconds: float
    """CPU time of the consuming process (all its threads) over the same span."""

    @property
    def rate(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else float("nan")

    @property
    def cpu_rate(self) -> float:
        return self.records / self.cpu_seconds if self.cpu_seconds > 0 else float("nan")


class BenchFailed(RuntimeError):
    pass


def run_rounds(
    bootstrap: str, registry: str, stream: MclStream, rounds: int, work: Path, sides: Sequence[str]
) -> list[SideRun]:
    runs: list[SideRun] = []
    for number in range(rounds):
        order = list(sides) if number % 2 == 0 else list(reversed(sides))
        for side in order:
            topics = (f"bench-{number}-{_slug(side)}-versioned", f"bench-{number}-{_slug(side)}-timeseries")
            asyncio.run(_produce(bootstrap, topics, stream))
            if side == MODELGUARD:
                run = modelguard_run(bootstrap, registry, topics, len(stream.records), work / f"mg-{number}")
            else:
                aspects = sorted(mirrored_aspects()) if side == PEER_FILTERED else []
                expected = stream.mirrored if aspects else len(stream.records)
                run = peer_run(bootstrap, registry, topics, expected, aspects, work / f"peer-{number}-{_slug(side)}")
                if aspects:  # the action sees the kept events; the source read every record between them
                    run = (len(stream.records) - 1, *run[1:])
            runs.append(SideRun(side, number, *run))
            print(
                f"  round {number + 1} {side:<28} {runs[-1].rate:>9,.0f} msg/s ({run[0]:,} in {run[1]:.2f} s), "
                f"{runs[-1].cpu_rate:>9,.0f} per CPU-second"
            )
    return runs


def modelguard_run(
    bootstrap: str, registry: str, topics: tuple[str, str], records: int, home: Path
) -> tuple[int, float, float]:
    """(records timed, seconds, CPU seconds of the service): from the first batch it committed to the last."""
    env = {
        "MODELGUARD_HOME": str(home),
        "MODELGUARD_MCL_TOPICS": ",".join(topics),
        "MODELGUARD_MCL_START": "earliest",
        "MODELGUARD_SCHEMA_REGISTRY_URL": registry,
        "MODELGUARD_KAFKA_PARTITIONS": str(PARTITIONS),
    }
    with _environment(env):
        settings = load_settings()
        mirror = settings.state_dir("context") / "mirror.sqlite"
        first_batch = _FirstBatch(mirror, settings.home)
        first_batch.start()  # the service consumes before the stack reports it ready: its first batch is watched for
        try:
            state = stack_up(settings, bootstrap, services=("context",), owns_broker=True)
        except BaseException:
            first_batch.stop()
            raise
        pid = state.services["context"]
        try:
            deadline = time.monotonic() + SIDE_TIMEOUT_S
            while time.monotonic() < deadline:
                total = _settled(mirror)
                now, cpu = time.perf_counter(), _cpu_seconds(pid)
                first = first_batch.seen
                if total >= records and first is not None:
                    return records - first[1], now - first[0], cpu - first[2]
                time.sleep(POLL_S)
            raise BenchFailed(f"the context service settled {_settled(mirror)} of {records} records; see {home}/logs")
        finally:
            first_batch.stop()
            stack_down(settings)


class _FirstBatch(threading.Thread):
    """Watches the mirror from before the service starts: the moment, the count and the service's CPU time when the
    first batch is settled (``seen``). Polled every :data:`FIRST_POLL_S`, so the clock starts within that much of it.
    The service's pid is the one the stack's supervisor records as it starts it, before the stack reports ready."""

    def __init__(self, mirror: Path, home: Path) -> None:
        super().__init__(daemon=True, name="first-batch")
        self.mirror, self.home = mirror, home
        self.seen: tuple[float, int, float] | None = None
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.is_set():
            state = read_state(self.home)
            pid = state.services.get("context") if state is not None else None
            total = _settled(self.mirror)
            if total and pid is not None:
                self.seen = (time.perf_counter(), total, _cpu_seconds(pid))
                return
            self._stopped.wait(FIRST_POLL_S)

    def stop(self) -> None:
        self._stopped.set()
        self.join()


def peer_run(
    bootstrap: str, registry: str, topics: tuple[str, str], expected: int, aspects: Sequence[str], work: Path
) -> tuple[int, float, float]:
    """(records timed, seconds, CPU seconds): from the first event the peer's action received to the ``expected``-th."""
    work.mkdir(parents=True, exist_ok=True)
    out = work / "result.json"
    command = [
        sys.executable,
        "-m",
        "benchmarks.datahub_actions_peer",
        *("--bootstrap", bootstrap, "--registry", registry, "--versioned", topics[0], "--timeseries", topics[1]),
        *("--group", f"bench-peer-{work.name}", "--expect", str(expected), "--out", str(out)),
        *(("--aspects", ",".join(aspects)) if aspects else ()),
    ]
    with (work / "peer.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            process.wait(timeout=SIDE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if not out.exists():
        raise BenchFailed(f"datahub-actions did not report {expected} events; see {work / 'peer.log'}")
    result = json.loads(out.read_text())
    seconds = float(result["last"]) - float(result["first"])
    return int(result["events"]) - 1, seconds, float(result["cpu_seconds"])


def summary(runs: Sequence[SideRun]) -> list[str]:
    lines: list[str] = []
    by_side: dict[str, list[float]] = {}
    for run in runs:
        by_side.setdefault(run.side, []).append(run.rate)
    for side, rates in by_side.items():
        cpu = statistics.median(run.cpu_rate for run in runs if run.side == side)
        lines.append(
            f"  {side:<28} median {statistics.median(rates):>9,.0f} msg/s  "
            f"(range {min(rates):,.0f} to {max(rates):,.0f}, {len(rates)} rounds); {cpu:,.0f} msg per CPU-second"
        )
    mine = by_side.get(MODELGUARD)
    for peer in (PEER_ALL, PEER_FILTERED):
        theirs = by_side.get(peer)
        if mine and theirs:
            per_round = [
                m.rate / p.rate
                for m in runs
                for p in runs
                if m.side == MODELGUARD and p.side == peer and m.round == p.round
            ]
            lines.append(
                f"  ModelGuard / {peer:<27} {statistics.median(mine) / statistics.median(theirs):.2f}x "
                f"(per round {min(per_round):.2f}x to {max(per_round):.2f}x)"
            )
    return lines


async def _produce(bootstrap: str, topics: tuple[str, str], stream: MclStream) -> None:
    await ensure_topics(bootstrap, topics, PARTITIONS)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=1 << 20, max_request_size=8 << 20
    )
    await producer.start()
    try:
        target = {VERSIONED: topics[0], TIMESERIES: topics[1]}
        sent = [await producer.send(target[record.topic], record.value, key=record.key) for record in stream.records]
        await asyncio.gather(*sent)
    finally:
        await producer.stop()


def _cpu_seconds(pid: int | None) -> float:
    """User + system CPU time of a process (all its threads) so far; 0 when it cannot be read."""
    return cpu_seconds(pid) or 0.0


def _settled(mirror: Path) -> int:
    if not mirror.exists():
        return 0
    db = sqlite3.connect(f"file:{mirror}?mode=ro", uri=True)
    try:
        return IntakeCounts.from_counters(dict(db.execute("SELECT name, value FROM counters").fetchall())).total
    except sqlite3.OperationalError:  # not created yet, or a write in progress
        return 0
    finally:
        db.close()


@contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _slug(side: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in side).strip("-")


def scratch() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="modelguard-mcl-bench-")
