"""The topics a stack creates on a broker it owns: one partition each when every service runs one process, the
configured count when a service runs replicas (``modelguard/embedded_partitions.py``); over the real broker."""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient

from contracts.registry import all_topics
from tests.support.running_stack import running_stack


async def _partitions(bootstrap: str, topics: list[str]) -> dict[str, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics(topics)
    finally:
        await admin.close()
    return {str(topic["topic"]): len(topic["partitions"]) for topic in described}


def test_one_partition_per_topic_when_every_service_runs_one_process(tmp_path: Path) -> None:
    with running_stack(tmp_path / "home", services=("ledger", "repairer")) as stack:
        topics = [*all_topics(), *stack.settings.mcl_topics]
        found = asyncio.run(_partitions(stack.bootstrap, topics))

    assert found == dict.fromkeys(topics, 1)


def test_a_service_with_replicas_gets_the_configured_partitions(tmp_path: Path) -> None:
    env = {"MODELGUARD_REPLICAS_REPAIRER": "2"}
    with running_stack(tmp_path / "home", env, services=("ledger", "repairer")) as stack:
        topics = [*all_topics(), *stack.settings.mcl_topics]
        found = asyncio.run(_partitions(stack.bootstrap, topics))

    assert found == dict.fromkeys(topics, stack.settings.kafka_partitions)
    assert stack.settings.kafka_partitions == 3
