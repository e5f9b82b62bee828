"""Which Kafka-protocol broker a test talks to: an address from the environment, a testcontainers Kafka
when a Docker engine answers, the embedded Tansu binary otherwise."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def docker_answers() -> bool:
    try:
        import docker

        docker.from_env(timeout=2).ping()
        return True
    except Exception:
        return False


@contextmanager
def kafka_broker(log_dir: Path) -> Iterator[str]:
    external = os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP")
    if external:
        yield external
        return
    if docker_answers():
        from testcontainers.kafka import KafkaContainer

        with KafkaContainer() as kafka:
            yield kafka.get_bootstrap_server()
        return
    from libs.bus.embedded_broker import start_embedded_broker

    broker = start_embedded_broker(log_dir / "broker.log")
    try:
        yield broker.bootstrap
    finally:
        broker.stop()


async def broker_topics(bootstrap: str) -> set[str]:
    """The topics the broker at ``bootstrap`` lists."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()
