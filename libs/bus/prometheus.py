"""A service's Prometheus metrics, served as ``/metrics`` by its health server (``libs/bus/health.py``).

Each service process has its own registry holding FastStream's messaging metrics (``KafkaPrometheusMiddleware``:
messages received, processed, published, their sizes and durations, by topic), the metrics every service has
(dead letters by reason, consumer lag) and those its definition adds (``ServiceDefinition.collectors``: the
ledger's incident metrics, the context service's MCL records). Labels never name an incident or an event, so the
number of series stays small.
"""

from __future__ import annotations

from collections.abc import Iterable

from faststream.kafka.prometheus import KafkaPrometheusMiddleware
from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.registry import Collector

from libs.bus.consumer_lag import ConsumerLag

DEAD_LETTERS = "modelguard_dead_letters"
"""``modelguard_dead_letters_total{reason}``: inputs this service sent to the dead-letter topic."""


class ServicePrometheus:
    def __init__(self, service: str, collectors: Iterable[Collector] = ()) -> None:
        self.service = service
        self.registry = CollectorRegistry()
        self.dead_letters = Counter(
            DEAD_LETTERS, "inputs sent to the dead-letter topic, by reason", ["reason"], registry=self.registry
        )
        self._middleware: KafkaPrometheusMiddleware | None = None
        self.consumer_lag = ConsumerLag()
        self.registry.register(self.consumer_lag)
        for collector in collectors:
            self.registry.register(collector)

    def middleware(self) -> KafkaPrometheusMiddleware:
        """FastStream's messaging metrics (``faststream_*``), labelled with the app name ``modelguard-<service>``.
        One per registry (a second would register the same metrics again): every broker of the service shares it."""
        if self._middleware is None:
            self._middleware = KafkaPrometheusMiddleware(registry=self.registry, app_name=f"modelguard-{self.service}")
        return self._middleware

    def dead_lettered(self, reason: str) -> None:
        self.dead_letters.labels(reason).inc()

    def exposition(self) -> bytes:
        """The registry in Prometheus's text format."""
        return generate_latest(self.registry)
