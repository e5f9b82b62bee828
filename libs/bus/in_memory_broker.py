"""FastStream's Kafka broker on an in-memory cluster (``libs/bus/in_memory_kafka.py``) instead of a Kafka cluster.

Only the connection differs: where FastStream's broker makes aiokafka's producer, admin client and consumers
(``KafkaBrokerConfig.connect``), this one makes the in-memory cluster's. Everything above those clients is
FastStream's and the runtime's own code, as a service process runs it: the subscribers' consume loops, parsing,
middlewares (telemetry, metrics), acknowledgement and rewind, the publishers' encoding and headers. A service's
runtime is given :func:`in_memory_brokers` in place of ``make_broker``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from faststream._internal.parser import DefaultCodec
from faststream.kafka import KafkaBroker

from libs.bus.in_memory_kafka import InMemoryKafka
from libs.bus.kafka_connection import KafkaConnection
from libs.bus.prometheus import ServicePrometheus
from libs.bus.runtime import BrokerFactory, make_broker
from libs.settings import Settings
from libs.telemetry import ServiceTelemetry

IN_MEMORY = KafkaConnection("in-memory:0")
"""The connection an in-memory broker is made with: nothing is ever dialled, no credentials are read."""


class InMemoryKafkaBroker(KafkaBroker):
    """A ``KafkaBroker`` whose clients are ``cluster``'s."""

    def __init__(self, *args: Any, cluster: InMemoryKafka, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cluster = cluster

    async def _connect(self) -> Callable[..., Any]:
        config = self.config.broker_config
        if not config.consumer_only:
            producer = self.cluster.producer(**self._connection_kwargs)
            await config.producer.connect(
                producer, serializer=config.fd_config._serializer, codec=config.broker_codec or DefaultCodec()
            )
            config.admin.admin_client = self.cluster.admin()
        config.builder = self.cluster.consumer
        return config.builder


def in_memory_brokers(cluster: InMemoryKafka) -> BrokerFactory:
    """``make_broker`` with every broker on ``cluster``: whichever connection the runtime asks for (the bus,
    DataHub's Kafka), it is the one cluster."""

    def make(
        settings: Settings,
        service: str,
        telemetry: ServiceTelemetry | None = None,
        prometheus: ServicePrometheus | None = None,
        connection: KafkaConnection | None = None,
        client_id: str | None = None,
        consumer_only: bool = False,
    ) -> KafkaBroker:
        return make_broker(
            settings,
            service,
            telemetry,
            prometheus,
            IN_MEMORY,
            client_id,
            consumer_only,
            broker_type=partial(InMemoryKafkaBroker, cluster=cluster),
        )

    return make
