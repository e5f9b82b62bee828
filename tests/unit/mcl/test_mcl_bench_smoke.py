"""The benchmark functions run on tiny inputs (the figures themselves come from ``make bench``)."""

from __future__ import annotations

from libs.datahub.mcl.bench import bench_impact_query, bench_mcl_decode
from services.context.upstream_risk import detect_upstream_risk


def test_the_decode_benchmark_runs_and_the_prefilter_skips_most_events() -> None:
    result = bench_mcl_decode(600, before_apply=detect_upstream_risk)

    assert result.events == 600 and result.relevant + result.skipped_by_prefilter == 600
    assert result.skipped_by_prefilter > 450
    assert result.decode_apply_events_per_second > 0 and result.with_step_events_per_second


def test_the_impact_benchmark_builds_the_requested_graph_and_finds_models() -> None:
    result = bench_impact_query(entities=2_000, edges=20_000, queries=30)

    assert result.entities == 2_000 and abs(result.edges - 20_000) < 500
    assert result.queries == 30 and result.mean_models_per_query > 0
    assert result.p50_ms <= result.p95_ms <= result.max_ms
