"""Explicit topic creation: never rely on broker auto-creation (Tansu gives 4 partitions, Kafka may refuse)."""

from __future__ import annotations

from collections.abc import Iterable

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from libs.bus.kafka_connection import KafkaConnection, connection_to


async def ensure_topics(
    target: KafkaConnection | str, topics: Iterable[str], partitions: int, replication: int = 1
) -> list[str]:
    """Create the topics that do not exist yet; return the names created."""
    admin = AIOKafkaAdminClient(**connection_to(target).client_options())
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [t for t in sorted(set(topics)) if t not in existing]
        if missing:
            await admin.create_topics(
                [NewTopic(name=t, num_partitions=partitions, replication_factor=replication) for t in missing]
            )
        return missing
    finally:
        await admin.close()
