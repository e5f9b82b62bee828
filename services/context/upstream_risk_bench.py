"""The MCL benchmarks on the context service's path: decode, detect upstream risk, apply to the mirror.

``python -m services.context.upstream_risk_bench [--events N] [--entities N] [--edges N]`` prints JSON
(``with_step_events_per_second`` is decode+detect+apply). The measurements live in
:mod:`libs.datahub.mcl.bench`; this module only adds the detection step, which libs may not import.
"""

from __future__ import annotations

from libs.datahub.mcl.bench import bench_arguments, bench_impact_query, bench_mcl_decode, bench_report
from services.context.upstream_risk import detect_upstream_risk


def main() -> None:
    arguments = bench_arguments("MCL decode+detect+apply and impact-query benchmarks")
    decode = bench_mcl_decode(arguments.events, before_apply=detect_upstream_risk)
    print(bench_report(decode, bench_impact_query(arguments.entities, arguments.edges, arguments.queries)))


if __name__ == "__main__":
    main()
