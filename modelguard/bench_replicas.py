"""`modelguard bench replicas`: incidents per minute through the embedded stack with one diagnoser process, then
with two in one consumer group (``MODELGUARD_REPLICAS_DIAGNOSER``), alternately, so both see the same machine.

Each run is a fresh stack and home with the same synthetic churn incidents (``bench.synthetic_reports``: every
phase computed for real); the clock runs from the reports' publication to the last incident's publication. The
diagnosis is one phase of six and the others run one process each, so a second diagnoser shortens only the
diagnosis queue; on a small machine the processes also share its cores. Figures are printed, never asserted.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from libs.bus.producer import publish_signed
from libs.ledger import LedgerStore
from libs.signing.keys import KeyRegistry
from modelguard.bench import fresh_home, pipeline_figures, synthetic_reports, wait_all
from modelguard.consumer_groups import wait_for_stable_group
from modelguard.percentiles import percentile
from modelguard.replicas import instance_names
from modelguard.stack import stack_down, stack_up

DIAGNOSER_GROUP = "modelguard-diagnoser"


@dataclass(frozen=True)
class ReplicaRun:
    diagnosers: int
    incidents: int
    completed: int
    wall_s: float
    handled: dict[str, int]
    """ContextCollected inputs each diagnoser process handled, from its log."""
    diagnose_latency_s: list[float]
    """Per incident: from ContextCollected to the diagnosis, queueing for a diagnoser included."""

    @property
    def per_minute(self) -> float:
        return 60.0 * self.completed / self.wall_s if self.wall_s > 0 else 0.0

    def line(self) -> str:
        split = ", ".join(f"{name} {n}" for name, n in sorted(self.handled.items()))
        latency = self.diagnose_latency_s
        return (
            f"{self.diagnosers} diagnoser(s): {self.completed}/{self.incidents} incidents in {self.wall_s:.1f} s "
            f"→ {self.per_minute:.2f} incidents/min; diagnosis latency p50 {percentile(latency, 0.5):.1f} s, "
            f"max {max(latency, default=float('nan')):.1f} s (diagnoses: {split})"
        )


def handled_inputs(logs: Path, instances: list[str]) -> dict[str, int]:
    counted: Counter[str] = Counter()
    for instance in instances:
        log = logs / f"{instance}.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        counted[instance] = text.count("diagnoser handled ContextCollected ")
    return dict(counted)


def run_once(out: Path, diagnosers: int, incidents: int) -> ReplicaRun:
    settings = fresh_home(out)
    state = stack_up(settings, os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"), replicas={"diagnoser": diagnosers})
    try:
        wait_for_stable_group(state.bootstrap, DIAGNOSER_GROUP, members=diagnosers, timeout_s=120)
        reports = synthetic_reports(settings, incidents)
        registry = KeyRegistry.load(settings.key_registry_path)
        store = LedgerStore(settings.ledger_url)
        started = time.monotonic()
        asyncio.run(publish_signed(state.bootstrap, reports))
        done = wait_all(store, registry, [r.event.meta.incident_id for r in reports], timeout_s=120.0 * incidents)
        wall = time.monotonic() - started
    finally:
        stack_down(settings)
    handled = handled_inputs(settings.home / "logs", instance_names("diagnoser", diagnosers))
    latency = pipeline_figures(done).latency.get("diagnose", [])
    return ReplicaRun(diagnosers, incidents, len(done), wall, handled, latency)


def run_replicas_bench(incidents: int, rounds: int, out: Path = Path("out/bench-replicas")) -> int:
    print(f"{incidents} synthetic incidents per run, one diagnoser then two, {rounds} round(s) alternately ...")
    runs: list[ReplicaRun] = []
    for round_number in range(1, rounds + 1):
        for diagnosers in (1, 2):
            run = run_once(out / f"round-{round_number}-{diagnosers}", diagnosers, incidents)
            print(f"round {round_number}: {run.line()}", flush=True)
            runs.append(run)
    for diagnosers in (1, 2):
        rates = sorted(run.per_minute for run in runs if run.diagnosers == diagnosers)
        print(f"{diagnosers} diagnoser(s): {rates[0]:.2f} to {rates[-1]:.2f} incidents/min over {len(rates)} run(s)")
    return 0 if all(run.completed == run.incidents for run in runs) else 1
