"""The MCL path without a broker: the intake on the benchmark stream, the mirror's bootstrap, impact queries.

- :func:`bench_intake`: :class:`services.context.mcl_intake.MclIntake` (the production path: every record validated,
  risk detection, the mirror on an SQLite file) over the burst stream in batches of the service's default size,
  each batch settled as the runtime settles it (state, change log, counts and offsets in one transaction);
- :func:`bench_bootstrap`: the layered lineage graph written as an MCP file (untimed), then an empty mirror filled
  from it (:func:`libs.datahub.mcl.mirror_bootstrap.bootstrap_from_files`: read, validate, index, store), timed;
- :func:`bench_impact`: impact queries on that mirror (:meth:`MetadataMirror.impact_report`) from random raw and
  derived datasets and jobs, latency percentiles.
"""

from __future__ import annotations

import gc
import random
import resource
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.mcl_workload import GraphShape, MclStream, dataset_urn, graph_aspects, write_mcp_file
from libs.bus.external_input import ExternalRecord, InputPosition
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.mirror_bootstrap import bootstrap_from_files
from libs.datahub.mcl.schema_registry import ShippedSchemaResolver
from libs.settings import Settings
from services.context.intake_counts import IntakeCounts
from services.context.mcl_intake import MclIntake

BATCH = Settings.mcl_batch_max_records
"""The service's default batch (``MODELGUARD_MCL_BATCH_MAX_RECORDS``)."""


@dataclass(frozen=True)
class IntakeFigures:
    records: int
    seconds: float
    cpu_seconds: float
    counts: IntakeCounts

    @property
    def rate(self) -> float:
        return self.records / self.seconds

    @property
    def cpu_rate(self) -> float:
        return self.records / self.cpu_seconds


@dataclass(frozen=True)
class BootstrapFigures:
    aspects: int
    entities: int
    edges: int
    seconds: float
    cpu_seconds: float
    file_mb: float


@dataclass(frozen=True)
class ImpactFigures:
    queries: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    cpu_p95_ms: float
    """The 95th percentile of the CPU time each query took on its thread (what other processes' load leaves out)."""
    mean_models: float
    max_rss_mb: float


def bench_intake(stream: MclStream, batch: int = BATCH) -> IntakeFigures:
    records = [
        ExternalRecord(InputPosition(record.topic, 0, offset), record.value, record.key)
        for offset, record in enumerate(stream.records)
    ]
    with tempfile.TemporaryDirectory() as folder:
        intake = MclIntake(MclDecoder(ShippedSchemaResolver()), MetadataMirror.open(Path(folder)))
        gc.collect()
        started, cpu = time.perf_counter(), time.process_time()
        for start in range(0, len(records), batch):
            result = intake.handle_batch(records[start : start + batch])
            intake.settle_batch(result.verdicts)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
        intake.mirror.close()
    return IntakeFigures(len(records), seconds, cpu_seconds, intake.counts)


def bench_bootstrap(entities: int, edges: int, folder: Path) -> tuple[BootstrapFigures, MetadataMirror]:
    """The figures, and the bootstrapped mirror (open, in ``folder``) for the impact queries."""
    source = folder / "graph.mcp.json"
    write_mcp_file(source, graph_aspects(entities, edges))
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    mirror = MetadataMirror.open(folder)
    kept = bootstrap_from_files(mirror, [source])
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    megabytes = source.stat().st_size / 2**20
    figures = BootstrapFigures(kept, mirror.entity_count, mirror.edge_count, seconds, cpu_seconds, megabytes)
    return figures, mirror


def bench_impact(mirror: MetadataMirror, entities: int, queries: int, seed: int = 7) -> ImpactFigures:
    rng = random.Random(seed + 1)
    shape = GraphShape.for_entities(entities)
    datasets = shape.raw + shape.derived
    starts = [
        job_urn_of(rng.randrange(shape.jobs)) if rng.random() < 0.2 else dataset_urn(rng.randrange(datasets))
        for _ in range(queries)
    ]
    latencies: list[float] = []
    cpu: list[float] = []
    models: list[int] = []
    for urn in starts:
        began, began_cpu = time.perf_counter(), time.thread_time()
        report = mirror.impact_report(urn)
        latencies.append((time.perf_counter() - began) * 1000)
        cpu.append((time.thread_time() - began_cpu) * 1000)
        models.append(len(report.impacts))
    latencies.sort()
    cpu.sort()
    return ImpactFigures(
        queries=len(latencies),
        p50_ms=_percentile(latencies, 50),
        p95_ms=_percentile(latencies, 95),
        p99_ms=_percentile(latencies, 99),
        max_ms=latencies[-1],
        cpu_p95_ms=_percentile(cpu, 95),
        mean_models=statistics.fmean(models),
        max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )


def job_urn_of(index: int) -> str:
    """A job of the layered graph (the stream's jobs are named apart: :func:`benchmarks.mcl_workload.job_urn`)."""
    return f"urn:li:dataJob:(urn:li:dataFlow:(airflow,dag_{index // 20},prod),task_{index})"


def _percentile(sorted_values: list[float], percent: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(percent / 100 * len(sorted_values)) - 1))
    return sorted_values[index]
