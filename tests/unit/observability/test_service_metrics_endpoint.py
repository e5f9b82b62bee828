"""/metrics on a service's health server, over real HTTP: every service's dead letters and consumer lag, and what its
definition adds, in Prometheus's text format."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx
from prometheus_client import Counter

from libs.bus.consumer_lag import consumer_lag, sample_lag_forever
from libs.bus.health import PROMETHEUS_TEXT, HealthServer, HealthState
from libs.bus.prometheus import ServicePrometheus
from tests.unit.observability.scrape import value


def test_metrics_are_served_beside_the_probes() -> None:
    own = Counter("modelguard_things", "things a service counts", registry=None)
    prometheus = ServicePrometheus("publisher", [own])
    prometheus.dead_lettered("bad-signature")
    prometheus.dead_lettered("bad-signature")
    prometheus.dead_lettered("handler-error")
    own.inc(3)
    server = HealthServer(HealthState(), 0, "127.0.0.1", prometheus.exposition).start()
    try:
        answer = httpx.get(f"http://127.0.0.1:{server.port}/metrics", timeout=5)
        assert httpx.get(f"http://127.0.0.1:{server.port}/healthz", timeout=5).status_code == 200
    finally:
        server.stop()
    assert answer.status_code == 200
    assert answer.headers["content-type"] == PROMETHEUS_TEXT
    assert value(answer.text, "modelguard_dead_letters_total", reason="bad-signature") == 2
    assert value(answer.text, "modelguard_dead_letters_total", reason="handler-error") == 1
    assert value(answer.text, "modelguard_things_total") == 3


@dataclass(frozen=True)
class TopicPartition:
    topic: str
    partition: int


class Consumer:
    """What the lag sampler asks of an aiokafka consumer: its assignment, the ends, the commits, the starts."""

    def __init__(self, ends: dict[TopicPartition, int], committed: dict[TopicPartition, int | None]) -> None:
        self.ends, self.commits = ends, committed

    def assignment(self) -> set[TopicPartition]:
        return set(self.ends)

    async def end_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.ends[tp] for tp in partitions}

    async def committed(self, tp: TopicPartition) -> int | None:
        return self.commits[tp]

    async def beginning_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        return dict.fromkeys(partitions, 2)


def test_lag_is_the_end_minus_the_commit_or_the_start_without_one() -> None:
    a0, a1 = TopicPartition("modelguard.a.v1", 0), TopicPartition("modelguard.a.v1", 1)
    lag = asyncio.run(consumer_lag(Consumer({a0: 10, a1: 7}, {a0: 4, a1: None})))
    assert lag == {("modelguard.a.v1", 0): 6, ("modelguard.a.v1", 1): 5}


def test_the_served_sample_drops_a_consumer_that_stopped() -> None:
    prometheus = ServicePrometheus("context")
    tp = TopicPartition("modelguard.b.v1", 2)
    consumers: list[Consumer | None] = [Consumer({tp: 9}, {tp: 9 - 4})]

    async def two_samples() -> tuple[str, str]:
        task = asyncio.create_task(sample_lag_forever(lambda: consumers, prometheus.consumer_lag, every_s=0.01))
        while not prometheus.consumer_lag.sample:
            await asyncio.sleep(0.01)
        first = prometheus.exposition().decode()
        consumers[0] = None  # stopped while the broker is away
        while prometheus.consumer_lag.sample:
            await asyncio.sleep(0.01)
        task.cancel()
        return first, prometheus.exposition().decode()

    first, after = asyncio.run(two_samples())
    assert value(first, "modelguard_consumer_lag_messages", topic="modelguard.b.v1", partition="2") == 4
    assert value(after, "modelguard_consumer_lag_messages", topic="modelguard.b.v1", partition="2") is None


def test_faststreams_messaging_metrics_share_the_registry() -> None:
    prometheus = ServicePrometheus("detector")
    assert b"faststream_received_messages_total" not in prometheus.exposition()
    middleware = prometheus.middleware()  # what make_broker installs on the service's broker
    assert b"# TYPE faststream_received_messages_total counter" in prometheus.exposition()
    assert prometheus.middleware() is middleware  # a second broker (DataHub's Kafka) shares it
