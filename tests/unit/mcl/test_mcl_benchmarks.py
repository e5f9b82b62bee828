"""The MCL benchmarks' workloads and measurements run on small inputs (the figures come from ``make bench``)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.mcl_inprocess import bench_bootstrap, bench_impact, bench_intake
from benchmarks.mcl_workload import TIMESERIES, VERSIONED, burst_stream


def test_the_stream_is_deterministic_about_a_kilobyte_per_record_and_mostly_aspects_the_mirror_does_not_keep() -> None:
    stream = burst_stream(1_500)
    assert stream == burst_stream(1_500) and stream != burst_stream(1_500, seed=8)
    assert len(stream.records) == 1_500
    assert 900 <= stream.average_bytes <= 1_500
    burst = len(stream.records) - stream.preamble  # after the features and models the preamble declares
    assert 0.25 <= (stream.mirrored - stream.preamble) / burst <= 0.35
    assert stream.on(VERSIONED) and stream.on(TIMESERIES)


def test_the_in_process_intake_applies_the_kept_records_and_skips_the_others() -> None:
    stream = burst_stream(2_000)
    figures = bench_intake(stream, batch=250)
    assert figures.counts.total == 2_000 and figures.counts.dead_lettered == {}
    assert figures.counts.applied + figures.counts.skipped["older-timeseries-run"] == stream.mirrored
    assert figures.counts.skipped["aspect-not-mirrored"] == 2_000 - stream.mirrored
    assert figures.rate > 0


def test_the_bootstrap_builds_the_requested_graph_and_impact_queries_find_models(tmp_path: Path) -> None:
    bootstrap, mirror = bench_bootstrap(entities=2_000, edges=20_000, folder=tmp_path)
    assert bootstrap.entities == 2_000 and abs(bootstrap.edges - 20_000) < 500
    impact = bench_impact(mirror, entities=2_000, queries=30)
    mirror.close()
    assert impact.queries == 30 and impact.mean_models > 0
    assert impact.p50_ms <= impact.p95_ms <= impact.max_ms
