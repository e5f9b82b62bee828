"""Benchmarks for the MCL path: decode-and-apply throughput and downstream impact-query latency.

Run with ``python -m libs.datahub.mcl.bench [--events N] [--entities N] [--edges N]``; prints JSON.

- :func:`bench_mcl_decode`: Confluent-framed Avro MCLs (shipped schema) on a mix where ~90% are
  irrelevant (datasetProperties, browsePathsV2, subTypes, datasetUsageStatistics, operation) and ~10%
  mirrored (schemaMetadata with previousAspectValue, ownership, upstreamLineage, status), decoded by
  :class:`MclDecoder` and applied to a :class:`MetadataMirror` on an SQLite file (features and models
  sit downstream of 1% of the datasets, so some schema changes are risks), flushed with offsets
  every 1,000 events. Reported as decode+apply (the decoder validates every event and converts each kept
  aspect to its SDK class); decode+apply with each kept event's previous value converted too; and, when
  given, with a step run before each
  apply (``services.context.upstream_risk_bench`` passes risk detection: the context service's path).
- :func:`bench_impact_query`: a generated layered graph (raw datasets -> jobs -> derived datasets ->
  features -> models, upstreams drawn from a window of the layer above) indexed with
  :meth:`LineageIndex.replace` (the call the mirror makes per aspect, without the SDK decode of 100k
  aspects; built under tracemalloc, so ``build_seconds`` is inflated), queried with
  :func:`mirror_impact.impact_report` (the function behind :meth:`MetadataMirror.impact_report`) from
  random raw and derived datasets and jobs.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from libs.datahub.mcl.bench_workload import (
    BENCH_SCHEMA_ID,
    GraphShape,
    MclStream,
    dataset_urn,
    deployment_of,
    layered_graph,
    mcl_stream,
)
from libs.datahub.mcl.column_lineage_index import ColumnLineageIndex
from libs.datahub.mcl.decoder import DecodeCounts, MclDecoder
from libs.datahub.mcl.events import DecodedMcl
from libs.datahub.mcl.lineage_index import LineageIndex
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.mirror_impact import ModelFacts, impact_report
from libs.datahub.mcl.schema_registry import ShippedSchemaResolver

FLUSH_EVERY_EVENTS = 1_000
WARM_UP_EVENTS = 2_000
BENCH_TOPIC = "MetadataChangeLog_Versioned_v1"


BeforeApply = Callable[[DecodedMcl, MetadataMirror], object]
"""A step run on each kept event before it is applied (e.g. risk detection); truthy results are counted."""


@dataclass(frozen=True)
class MclDecodeBench:
    events: int
    relevant: int
    skipped_by_prefilter: int
    decode_apply_events_per_second: int
    eager_typed_decode_apply_events_per_second: int
    with_step_events_per_second: int | None = None
    step_results: int = 0


@dataclass(frozen=True)
class ImpactQueryBench:
    entities: int
    edges: int
    queries: int
    build_seconds: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    mean_models_per_query: float
    index_memory_mb: float
    max_rss_mb: float


def bench_mcl_decode(
    n: int = 100_000, relevant_share: float = 0.10, seed: int = 7, *, before_apply: BeforeApply | None = None
) -> MclDecodeBench:
    """Events/s of decode+apply, of decode+apply with eager SDK conversion, and with ``before_apply``."""
    stream = mcl_stream(n, relevant_share, seed=seed)
    warm_up = replace(stream, messages=stream.messages[:WARM_UP_EVENTS])  # one-time caches (schema walks)
    _decode_apply_run(warm_up, eager_typed=True, before_apply=before_apply)
    plain = _decode_apply_run(stream, eager_typed=False, before_apply=None)
    eager = _decode_apply_run(stream, eager_typed=True, before_apply=None)
    step = _decode_apply_run(stream, eager_typed=False, before_apply=before_apply) if before_apply else None
    return MclDecodeBench(
        events=n,
        relevant=stream.relevant,
        skipped_by_prefilter=plain.skipped,
        decode_apply_events_per_second=round(n / plain.seconds),
        eager_typed_decode_apply_events_per_second=round(n / eager.seconds),
        with_step_events_per_second=round(n / step.seconds) if step else None,
        step_results=step.step_results if step else 0,
    )


@dataclass(frozen=True)
class _Run:
    seconds: float
    skipped: int
    step_results: int


def _decode_apply_run(stream: MclStream, eager_typed: bool, before_apply: BeforeApply | None) -> _Run:
    step_results = 0
    messages = stream.messages
    with tempfile.TemporaryDirectory() as folder:
        mirror = MetadataMirror.open(Path(folder) / "mirror.sqlite")
        decoder = MclDecoder(ShippedSchemaResolver())
        for message in stream.preamble:
            mirror.apply(_kept(decoder.decode_avro(message)))
        decoder.counts = DecodeCounts()
        gc.collect()
        started = time.perf_counter()
        for offset, message in enumerate(messages):
            mcl = decoder.decode_avro(message)
            if mcl is not None:
                if before_apply is not None and before_apply(mcl, mirror):
                    step_results += 1
                if eager_typed:
                    _ = mcl.aspect, mcl.previous_aspect
                mirror.apply(mcl)
            if offset % FLUSH_EVERY_EVENTS == FLUSH_EVERY_EVENTS - 1:
                mirror.flush({(BENCH_TOPIC, 0): offset + 1})
        mirror.flush({(BENCH_TOPIC, 0): len(messages)})
        seconds = time.perf_counter() - started
        mirror.close()
    return _Run(seconds, decoder.counts.skipped, step_results)


def _kept(mcl: DecodedMcl | None) -> DecodedMcl:
    if mcl is None:
        raise AssertionError("the prefilter dropped a preamble MCL")
    return mcl


def bench_impact_query(
    entities: int = 100_000, edges: int = 1_000_000, queries: int = 2_000, seed: int = 7
) -> ImpactQueryBench:
    gc.collect()
    tracemalloc.start()
    started = time.perf_counter()
    lineage = LineageIndex()
    deployments: dict[str, tuple[str, ...]] = {}
    owners: dict[str, tuple[str, ...]] = {}
    for declared in layered_graph(entities, edges, seed=seed):
        lineage.replace(declared.urn, declared.aspect_name, declared.pairs)
        if declared.aspect_name == "mlModelProperties":
            deployments[declared.urn] = (deployment_of(declared.urn),)
            owners[declared.urn] = ("urn:li:corpuser:ml-owner", "urn:li:corpGroup:ml-platform")
    build_seconds = time.perf_counter() - started
    index_memory = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()

    facts = ModelFacts(deployments, owners)
    columns = ColumnLineageIndex()
    starts = _query_starts(lineage, entities, queries, seed)
    latencies: list[float] = []
    model_counts: list[int] = []
    for urn in starts:
        began = time.perf_counter()
        report = impact_report(lineage, columns, _no_schema, facts, urn)
        latencies.append((time.perf_counter() - began) * 1000)
        model_counts.append(len(report.impacts))
    latencies.sort()
    return ImpactQueryBench(
        entities=lineage.node_count,
        edges=lineage.edge_count,
        queries=len(latencies),
        build_seconds=round(build_seconds, 1),
        p50_ms=round(_percentile(latencies, 50), 3),
        p95_ms=round(_percentile(latencies, 95), 3),
        p99_ms=round(_percentile(latencies, 99), 3),
        max_ms=round(latencies[-1], 3),
        mean_models_per_query=round(statistics.fmean(model_counts), 1),
        index_memory_mb=round(index_memory / 2**20, 1),
        max_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    )


def _query_starts(lineage: LineageIndex, entities: int, queries: int, seed: int) -> list[str]:
    """Random raw datasets, derived datasets and jobs: where upstream changes happen."""
    rng = random.Random(seed + 1)
    shape = GraphShape.for_entities(entities)
    datasets = shape.raw + shape.derived
    jobs = [urn for node in range(lineage.node_count) if (urn := lineage.urn_of(node)).startswith("urn:li:dataJob:")]
    return [rng.choice(jobs) if rng.random() < 0.2 else dataset_urn(rng.randrange(datasets)) for _ in range(queries)]


def _no_schema(dataset_urn: str) -> frozenset[str] | None:
    return None


def _percentile(sorted_values: list[float], percent: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(percent / 100 * len(sorted_values)) - 1))
    return sorted_values[index]


def bench_arguments(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=2_000)
    return parser.parse_args()


def bench_report(decode: MclDecodeBench, impact: ImpactQueryBench) -> str:
    document = {"schema_id": BENCH_SCHEMA_ID, "mcl_decode": asdict(decode), "impact_query": asdict(impact)}
    return json.dumps(document, indent=2)


def main() -> None:
    arguments = bench_arguments("MCL decode-and-apply and impact-query benchmarks")
    decode = bench_mcl_decode(arguments.events)
    print(bench_report(decode, bench_impact_query(arguments.entities, arguments.edges, arguments.queries)))


if __name__ == "__main__":
    main()
