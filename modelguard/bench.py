"""`make bench`: synthetic incidents through the embedded stack, and the ledger's own rates.

Each synthetic incident is the churn evaluation (computed once, as the model's CI would) reported under
its own synthetic candidate commit id, its two snapshots made its own by one file naming the incident, so
every incident runs every phase for real (no evaluation of one incident is another's): context, diagnosis
(features on both trees), repair, validation (tests, evaluation, data check) and publication. Each incident's
time is then split into its workspace commands and ModelGuard's own (`pipeline_overhead`).
Figures are printed, never asserted: speed targets live here, not in timed tests.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import shutil
import statistics
import tarfile
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from aiokafka.errors import KafkaError

from contracts.common import ArtifactRef
from contracts.events.evaluation import EvaluationReported
from libs.artifacts.open_store import artifact_store
from libs.artifacts.store import ArtifactStore
from libs.bundle.load import load_bundle
from libs.bus.producer import publish_signed
from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore
from libs.settings import DOORBELLS_ENV, FETCH_MAX_WAIT_ENV, Settings, load_settings
from libs.signing.keys import KeyRegistry, SigningKey, load_private_key
from libs.workspace.snapshot import GitArchiveHeader
from modelguard.bench_ledger import bench_ledger
from modelguard.broker_restart import republish_once, run_broker_restart
from modelguard.bus_hop_probe import HopLatencies, ProbeFailed, hop_latencies
from modelguard.chaos import run_chaos
from modelguard.incident_log import incident_events
from modelguard.local_postgres import PostgresUnavailable, throwaway_cluster
from modelguard.memory_scratch import scratch_description
from modelguard.one_at_a_time import one_at_a_time_lines, report_one_at_a_time
from modelguard.percentiles import percentile
from modelguard.pipeline_overhead import (
    IncidentTime,
    Spans,
    at_once,
    incident_times,
    measured_twice,
    read_spans,
    services_cpu_line,
)
from modelguard.process_cpu import CpuSpent, cpu_readings
from modelguard.reporter import PRODUCER, evaluate_bundle, sign_report
from modelguard.stack import (
    SCENARIOS,
    doorbells_folder,
    embedded_broker_environment,
    stack_doorbells,
    stack_down,
    stack_up,
)
from modelguard.summary import PHASE_OF

CHURN = SCENARIOS / "churn-monthly-spend"
PHASES = ("detect", "context", "diagnose", "repair", "validate", "publish")
ALONE = 8
"""Incidents the pipeline bench reports one at a time after its wave (``one_at_a_time.py``). Its p50 is the figure
the per-incident overhead goal is read from: with four, it moved 170-390 ms between runs of like code on this shared
machine; fourteen passes of eight over two days gave 155-236 ms, the two highest while the machine ran the commands
themselves 20-30 % slower (about 25 s more of ``make bench``)."""


def _own_snapshot(artifacts: ArtifactStore, snapshot: ArtifactRef, incident: int) -> ArtifactRef:
    """The snapshot with one more file, naming the incident: the same code, another tree. Written as ``git archive``
    writes it (what ``extract_snapshot`` takes): the global header once, first, and not in each member's header."""
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(artifacts.get(snapshot)), mode="r:", tarinfo=GitArchiveHeader) as given,
        tarfile.open(fileobj=out, mode="w:", format=tarfile.PAX_FORMAT, pax_headers=given.pax_headers) as made,
    ):
        for member in given.getmembers():
            member.pax_headers = {}  # tarfile copies the global records here; the writer adds a long name's own
            made.addfile(member, given.extractfile(member) if member.isfile() else None)
        text = f"bench incident {incident}\n".encode()
        marker = tarfile.TarInfo("BENCH_INCIDENT")
        marker.size = len(text)
        made.addfile(marker, io.BytesIO(text))
    return artifacts.put(out.getvalue(), snapshot.media_type)


def synthetic_reports(settings: Settings, n: int) -> list[SignedEvent]:
    """``n`` reports of the churn scenario's evaluation, each of its own trees, signed now."""
    metric, key, evaluations = synthetic_evaluations(settings, n)
    return [sign_report(evaluation, metric, key) for evaluation in evaluations]


def synthetic_evaluations(settings: Settings, n: int) -> tuple[str, SigningKey, list[EvaluationReported]]:
    """The gate's metric, the reporter's key and ``n`` evaluations to report: the churn scenario evaluated once,
    then each given trees of its own (``_own_snapshot``) and a commit and run of its own."""
    metric = load_bundle(CHURN).spec.gate.metric
    artifacts = artifact_store(settings)
    evaluation = evaluate_bundle(CHURN, settings.home / "ci", artifacts, "bench-template", None)
    key = load_private_key(PRODUCER, settings.keys_dir / f"{PRODUCER}.key")
    evaluations = []
    for i in range(n):
        commit = hashlib.sha1(f"bench-{i}-{evaluation.workspace.candidate_commit}".encode()).hexdigest()
        workspace = evaluation.workspace.model_copy(
            update={
                "candidate_commit": commit,
                "base_snapshot": _own_snapshot(artifacts, evaluation.workspace.base_snapshot, i),
                "candidate_snapshot": _own_snapshot(artifacts, evaluation.workspace.candidate_snapshot, i),
            }
        )
        evaluations.append(evaluation.model_copy(update={"run_id": f"bench-{i}", "workspace": workspace}))
    return metric, key, evaluations


def wait_all(
    store: LedgerStore, registry: KeyRegistry, incidents: list[str], timeout_s: float, poll_s: float = 0.1
) -> dict[str, list[SignedEvent]]:
    """Each incident's events once it has published. The wait reads the ledger's incident heads (one statement)
    and reads and verifies an incident's events only when its head moved: reading every incident at every look
    took 85 ms of CPU per look at ten incidents, a sixth of a core taken from what the bench measures."""
    deadline = time.monotonic() + timeout_s
    wanted, read_at = set(incidents), dict[str, int]()
    done: dict[str, list[SignedEvent]] = {}
    while len(done) < len(wanted) and time.monotonic() < deadline:
        for head in store.incidents():
            incident = head.incident_id
            if incident in wanted and incident not in done and read_at.get(incident) != head.sequence:
                read_at[incident] = head.sequence
                events = incident_events(store, incident, registry)
                if any(e.event.meta.event_type == "Published" for e in events):
                    done[incident] = events
        if len(done) < len(wanted):
            time.sleep(poll_s)
    return done


@dataclass(frozen=True)
class PipelineFigures:
    latency: dict[str, list[float]]
    """per phase: from the cause's timestamp to the output's, queueing included"""
    service: dict[str, list[float]]
    """per phase: from when the service could start (its cause arrived and its previous output was done)"""
    end_to_end: list[float]


def pipeline_figures(done: dict[str, list[SignedEvent]]) -> PipelineFigures:
    latency: dict[str, list[float]] = defaultdict(list)
    starts: dict[str, list[tuple[datetime, datetime]]] = defaultdict(list)
    end_to_end: list[float] = []
    for events in done.values():
        by_id = {e.event.meta.event_id: e for e in events}
        for e in events:
            cause = by_id.get(e.event.meta.causation_id or "")
            if cause is not None:
                phase = PHASE_OF.get(e.event.meta.producer, e.event.meta.producer)
                latency[phase].append((e.event.meta.occurred_at - cause.event.meta.occurred_at).total_seconds())
                starts[phase].append((cause.event.meta.occurred_at, e.event.meta.occurred_at))
        end_to_end.append((events[-1].event.meta.occurred_at - events[0].event.meta.occurred_at).total_seconds())
    service: dict[str, list[float]] = {}
    for phase, spans in starts.items():  # each service consumes one input at a time
        durations, previous_end = [], None
        for arrived, finished in sorted(spans, key=lambda span: span[1]):
            began = max(arrived, previous_end) if previous_end else arrived
            durations.append((finished - began).total_seconds())
            previous_end = finished
        service[phase] = durations
    return PipelineFigures(latency, service, end_to_end)


def overhead_lines(times: list[IncidentTime], spans: Spans) -> list[str]:
    """Each incident's own work split into the workspace's commands and ModelGuard's, and what ran how often."""
    if not times:
        return ["\nno incident finished: nothing to split"]
    ms = [1000 * t.overhead for t in times]
    handling = [1000 * t.handling for t in times]
    lines = [
        f"\nwhere an incident's own work goes (queueing excluded; p50 over {len(times)} incidents):",
        f"  own work {percentile([t.own_work for t in times], 0.5):.2f} s = workspace commands "
        f"{percentile([t.commands for t in times], 0.5):.2f} s + ModelGuard {percentile(ms, 0.5):.0f} ms "
        f"(p95 {percentile(ms, 0.95):.0f} ms)",
        "  ModelGuard by phase, p50 ms: "
        + "  ".join(
            f"{phase} {percentile([1000 * t.by_phase.get(phase, 0.0) for t in times], 0.5):.0f}" for phase in PHASES
        ),
        f"  of it, until each service took its input (the bus delivering it) p50 "
        f"{percentile([1000 * t.waited for t in times], 0.5):.0f} ms: "
        + "  ".join(
            f"{phase} {percentile([1000 * t.waited_by_phase.get(phase, 0.0) for t in times], 0.5):.0f}"
            for phase in PHASES
        ),
        f"  and handling the inputs outside their commands p50 {percentile(handling, 0.5):.0f} ms (verifying, "
        "claiming, extracting, ModelGuard's own analysis, signing)",
        "workspace commands per incident (median runs, median seconds in all):",
    ]
    for service, label in sorted({k for t in times for k in t.runs}):
        runs = statistics.median(t.runs.get((service, label), 0) for t in times)
        seconds = statistics.median(t.command_seconds.get((service, label), 0.0) for t in times)
        lines.append(f"  {service:10} {label:28} {runs:4.0f}  {seconds:7.2f}")
    evaluations = spans.evaluations
    twice = measured_twice(evaluations)
    measured = sum(not e.cached for e in evaluations)
    lines.append(
        f"evaluations: {len(evaluations)} asked, {measured} measured, {len(evaluations) - measured} read from the "
        f"cache; keys measured twice: {len(twice) or 'none'}"
    )
    return lines


def _broker_hop(bootstrap: str, settings: Settings) -> HopLatencies | str:
    """The broker's own share of a hop at the services' fetch wait (the stack gives them a short one on its embedded
    broker unless the variable is set); a line saying why when it could not be measured."""
    embedded = not os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP", "").strip()
    chosen = {FETCH_MAX_WAIT_ENV: str(settings.kafka_fetch_max_wait_ms)} if os.environ.get(FETCH_MAX_WAIT_ENV) else {}
    if embedded:
        embedded_broker_environment(settings, chosen)  # what the stack gives its services on its own broker
    wait_ms = int(chosen.get(FETCH_MAX_WAIT_ENV, settings.kafka_fetch_max_wait_ms))
    # on its own broker the stack's services wait for their doorbells (libs/bus/doorbell.py): the probe does too
    doorbells = doorbells_folder(settings) if embedded and os.environ.get(DOORBELLS_ENV) != "" else None
    try:
        return asyncio.run(hop_latencies(bootstrap if embedded else settings.kafka, wait_ms, doorbells=doorbells))
    except (ProbeFailed, KafkaError, OSError) as exc:
        return f"the broker's own share of a hop: not measured ({type(exc).__name__}: {exc})"


def fresh_home(out: Path) -> Settings:
    """An empty ``out/stack`` as this process's ModelGuard home, and its settings."""
    home = out / "stack"
    shutil.rmtree(home, ignore_errors=True)
    os.environ["MODELGUARD_HOME"] = str(home)
    return load_settings()


def run_chaos_bench(n: int, kills: int, out: Path = Path("out/bench-chaos")) -> int:
    """The synthetic incidents with random services SIGKILLed under the supervisor (``modelguard/chaos.py``)."""
    settings = fresh_home(out)
    state = stack_up(settings, os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"))
    try:
        print(f"evaluating the churn scenario once, then {n} synthetic incidents with {kills} SIGKILLs ...")
        figures = run_chaos(settings, state, synthetic_reports(settings, n), kills, timeout_s=90.0 * n + 300)
    finally:
        stack_down(settings)
    print("\n".join(figures.lines()))
    return 0 if figures.completed == n and not figures.duplicated and figures.ledger_verified else 1


def run_broker_restart_bench(
    out: Path = Path("out/bench-broker-restart"), outages_s: tuple[float, ...] = (2.0, 30.0)
) -> int:
    """Incidents in flight when the embedded broker is lost and after a new one comes up (``broker_restart``):
    a quick restart, and an outage long enough for the services to stop their consumers and probe."""
    failed = 0
    for outage_s in outages_s:
        settings = fresh_home(out / f"outage-{outage_s:.0f}s")
        print(f"losing the broker with 2 incidents in flight for {outage_s:.0f}s, then 2 more on a new one ...")
        figures = run_broker_restart(
            settings, synthetic_reports, republish_once(settings), in_flight=2, after=2, outage_s=outage_s
        )
        print("\n".join(figures.lines()))
        failed += bool(figures.lost or figures.duplicated)
    return 1 if failed else 0


def run_bench(n: int, out: Path = Path("out/bench")) -> int:
    settings = fresh_home(out)
    state = stack_up(settings, os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"))
    laid_out_in = scratch_description(settings)
    try:
        print(
            f"evaluating the churn scenario once, then reporting {n} synthetic incidents at once and {ALONE} more "
            "one at a time ..."
        )
        metric, key, evaluations = synthetic_evaluations(settings, n + ALONE)
        reports = [sign_report(evaluation, metric, key) for evaluation in evaluations[:n]]
        registry = KeyRegistry.load(settings.key_registry_path)
        store = LedgerStore(settings.ledger_url)
        processes = {**state.services, "broker": state.broker_pid}
        cpu_before = cpu_readings(processes)
        started = time.monotonic()
        doorbells = stack_doorbells(settings, state)
        try:
            asyncio.run(publish_signed(state.bootstrap, reports, doorbells=doorbells))
            done = wait_all(store, registry, [r.event.meta.incident_id for r in reports], timeout_s=60.0 * n + 120)
            wall = time.monotonic() - started
            spent = CpuSpent.between(cpu_before, cpu_readings(processes))
            hop = _broker_hop(state.bootstrap, settings)
            alone = report_one_at_a_time(
                evaluations[n:],
                lambda evaluation: sign_report(evaluation, metric, key),
                lambda report: asyncio.run(publish_signed(state.bootstrap, [report], doorbells=doorbells)),
                lambda incident: wait_all(store, registry, [incident], timeout_s=180.0).get(incident),
            )
        finally:
            doorbells.close()
    finally:
        stack_down(settings)
    figures = pipeline_figures(done)
    print(f"\npipeline: {len(done)}/{n} incidents published in {wall:.1f}s → {len(done) / wall:.3f} incidents/s")
    print("latency = cause to output, queueing included; service = the phase's own work")
    print(f"{'phase':10} {'latency p50':>12} {'p95':>8} {'service p50':>12} {'p95':>8}  n")
    for phase in PHASES:
        lat, svc = figures.latency.get(phase, []), figures.service.get(phase, [])
        print(
            f"{phase:10} {percentile(lat, 0.5):12.3f} {percentile(lat, 0.95):8.3f} "
            f"{percentile(svc, 0.5):12.3f} {percentile(svc, 0.95):8.3f}  {len(lat)}"
        )
    e2e = figures.end_to_end
    print(f"{'end-to-end':10} {percentile(e2e, 0.5):12.3f} {percentile(e2e, 0.95):8.3f}")
    spans = read_spans(settings.trace_file or settings.home / "traces.jsonl")
    print("\n".join(overhead_lines(incident_times(done, spans), spans)))
    print(f"  {hop if isinstance(hop, str) else hop.line()}")
    together = at_once(done, spans, wall, len(os.sched_getaffinity(0)))
    print(together.line())
    print(services_cpu_line(spent, len(done), together))
    print("\n".join(one_at_a_time_lines(incident_times(alone, spans), ALONE, PHASES)))
    print(f"  workspaces and commands' staging laid out in {laid_out_in}")
    with tempfile.TemporaryDirectory() as scratch:
        print("\n" + str(bench_ledger(f"sqlite:///{scratch}/bench.sqlite", 2000)))
    postgres = os.environ.get("MODELGUARD_BENCH_POSTGRES_URL")
    if postgres:
        print(str(bench_ledger(postgres, 2000)))
    else:
        try:
            with throwaway_cluster(durable=True) as url:
                print(str(bench_ledger(url, 2000)) + " (throwaway local cluster, fsync on)")
        except PostgresUnavailable as exc:
            print(f"ledger on postgresql: not measured ({exc}); set MODELGUARD_BENCH_POSTGRES_URL")
    return 0 if len(done) == n and len(alone) == ALONE else 1
