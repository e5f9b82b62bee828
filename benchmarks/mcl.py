"""`make bench`'s MCL figures: ``python -m benchmarks.mcl [--records N] [--rounds R] [--entities N] [--edges N]``.

Prints, each beside its goal (issue 18):

- the stream (records, average size, share the mirror keeps);
- the intake in process (no broker);
- broker → handled, ModelGuard's context service beside datahub-actions' own pipeline on the same embedded broker
  and stream, alternating rounds, the ratio per round and of the medians (:mod:`benchmarks.mcl_broker`); also per
  CPU-second of the consuming process, which a machine shared with other work disturbs less than wall time;
- the mirror's bootstrap of the layered lineage graph from an MCP file, and impact-query latency on it.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.local_schema_registry import local_schema_registry
from benchmarks.mcl_broker import MODELGUARD, PEER_ALL, PEER_FILTERED, BenchFailed, run_rounds, scratch, summary
from benchmarks.mcl_inprocess import bench_bootstrap, bench_impact, bench_intake
from benchmarks.mcl_workload import burst_stream
from libs.bus.embedded_broker import start_embedded_broker

BROKER_GOAL = 3.0
BOOTSTRAP_GOAL_S = 15.0
IMPACT_P95_GOAL_MS = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description="MCL intake, mirror bootstrap and impact benchmarks")
    parser.add_argument("--records", type=int, default=100_000, help="MCL records in the stream")
    parser.add_argument("--rounds", type=int, default=3, help="alternating broker rounds")
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--no-peer", action="store_true", help="ModelGuard only (without datahub-actions)")
    arguments = parser.parse_args()

    stream = burst_stream(arguments.records)
    print(
        f"MCL stream: {len(stream.records):,} records, {stream.average_bytes:,.0f} bytes on average, "
        f"{stream.mirrored / len(stream.records):.0%} of aspects the mirror keeps"
    )
    intake = bench_intake(stream)
    print(
        f"intake in process (no broker): {intake.rate:,.0f} records/s, {intake.cpu_rate:,.0f} per CPU-second; "
        f"{intake.counts.to_json()}"
    )

    sides = [MODELGUARD] if arguments.no_peer else [MODELGUARD, PEER_ALL, PEER_FILTERED]
    print(f"broker -> handled, {arguments.rounds} alternating rounds (embedded broker, schema registry over HTTP):")
    with scratch() as folder:
        broker = start_embedded_broker(Path(folder) / "broker.log")
        try:
            with local_schema_registry() as registry:
                runs = run_rounds(broker.bootstrap, registry, stream, arguments.rounds, Path(folder), sides)
        except BenchFailed as failure:
            print(f"  failed: {failure}")
            runs = []
        finally:
            broker.stop()
    for line in summary(runs):
        print(line)
    print(f"  goal: ModelGuard >= {BROKER_GOAL:.0f}x datahub-actions (all)")

    with scratch() as folder:
        bootstrap, mirror = bench_bootstrap(arguments.entities, arguments.edges, Path(folder))
        print(
            f"mirror bootstrap from an MCP file ({bootstrap.file_mb:,.0f} MB): {bootstrap.aspects:,} aspects, "
            f"{bootstrap.entities:,} entities, {bootstrap.edges:,} edges in {bootstrap.seconds:.1f} s "
            f"({bootstrap.cpu_seconds:.1f} CPU-seconds; goal <= {BOOTSTRAP_GOAL_S:.0f} s for 1M edges)"
        )
        impact = bench_impact(mirror, arguments.entities, arguments.queries)
        print(
            f"impact query on it: p50 {impact.p50_ms:.2f} ms, p95 {impact.p95_ms:.2f} ms, p99 {impact.p99_ms:.2f} ms, "
            f"max {impact.max_ms:.1f} ms (CPU p95 {impact.cpu_p95_ms:.2f} ms), "
            f"{impact.mean_models:.1f} models per query "
            f"(goal p95 <= {IMPACT_P95_GOAL_MS:.0f} ms); max RSS {impact.max_rss_mb:,.0f} MB"
        )
        mirror.close()


if __name__ == "__main__":
    main()
