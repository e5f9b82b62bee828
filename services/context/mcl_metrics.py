"""``modelguard_mcl_records_total{verdict,reason}``: every MCL record the context service settled, by how it ended
(``applied``, ``skipped``, ``dead_lettered``) and why (the skip or dead-letter reason; empty when applied).

Read at each scrape from the intake's counts (``intake_counts``), which are kept in the mirror with its offsets,
so the figure is exact across restarts: each record counted once, when its offset is settled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from services.context.intake_counts import IntakeCounts

MCL_RECORDS = "modelguard_mcl_records"


class MclRecordsCollector(Collector):
    def __init__(self, counts: Callable[[], IntakeCounts]) -> None:
        self._counts = counts

    def describe(self) -> Iterator[Metric]:
        yield CounterMetricFamily(MCL_RECORDS, "MCL records settled", labels=["verdict", "reason"])

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            MCL_RECORDS, "MCL records settled, by verdict and reason", labels=["verdict", "reason"]
        )
        counts = IntakeCounts.from_json(self._snapshot())
        family.add_metric(["applied", ""], counts.applied)
        for verdict, by_reason in (("skipped", counts.skipped), ("dead_lettered", counts.dead_lettered)):
            for reason, count in sorted(by_reason.items()):
                family.add_metric([verdict, reason], count)
        yield family

    def _snapshot(self) -> str:
        """The counts as JSON; the consumer's thread may be adding one while this reads, so try again then."""
        for _ in range(5):
            try:
                return self._counts().to_json()
            except RuntimeError:  # a dict changed size while it was read
                continue
        return ""
