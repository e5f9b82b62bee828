"""Consumer lag: per assigned partition, how many messages lie between the group's committed offset and the end
of the log (``modelguard_consumer_lag_messages{topic,partition}``).

Sampled every few seconds from the service's consumers (``sample_lag_forever``, beside the broker-loss check), and
served from the last sample: a partition no longer assigned, or a consumer stopped while the broker is away,
drops out of the next sample instead of reporting a stale figure.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

log = logging.getLogger("modelguard.bus")

CONSUMER_LAG = "modelguard_consumer_lag_messages"
LAG_SAMPLE_S = 5.0


class ConsumerLag(Collector):
    """A Prometheus collector of the last sample."""

    def __init__(self) -> None:
        self.sample: dict[tuple[str, int], int] = {}

    def describe(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(CONSUMER_LAG, "messages not yet handled", labels=["topic", "partition"])

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            CONSUMER_LAG,
            "messages between the group's committed offset and the end of the partition",
            labels=["topic", "partition"],
        )
        for (topic, partition), lag in sorted(dict(self.sample).items()):
            family.add_metric([topic, str(partition)], lag)
        yield family


async def consumer_lag(consumer: Any, timeout_s: float = 5.0) -> dict[tuple[str, int], int]:
    """One consumer's lag per assigned partition (an aiokafka consumer); without a commit, from the log's start."""
    partitions = sorted(consumer.assignment(), key=lambda tp: (tp.topic, tp.partition))
    if not partitions:
        return {}
    ends = await asyncio.wait_for(consumer.end_offsets(partitions), timeout_s)
    starts: dict[Any, int] = {}
    lag = {}
    for tp in partitions:
        committed = await asyncio.wait_for(consumer.committed(tp), timeout_s)
        if committed is None:
            starts = starts or await asyncio.wait_for(consumer.beginning_offsets(partitions), timeout_s)
            committed = starts[tp]
        lag[(tp.topic, tp.partition)] = max(0, ends[tp] - committed)
    return lag


async def sample_lag_forever(
    consumers: Callable[[], list[Any]], into: ConsumerLag, every_s: float = LAG_SAMPLE_S
) -> None:
    while True:
        sample: dict[tuple[str, int], int] = {}
        for consumer in consumers():
            if consumer is None:
                continue
            try:
                sample.update(await consumer_lag(consumer))
            except Exception as exc:  # a broker away, a rebalance: the next sample tries again
                log.debug("consumer lag not sampled: %s", exc)
        into.sample = sample
        await asyncio.sleep(every_s)
