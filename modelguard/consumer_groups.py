"""What the stack's tests and benchmarks need to know of a consumer group on the real broker: when it is stable with
its members (every replica joined), and on which partition an incident's events land."""

from __future__ import annotations

import asyncio
import time

from aiokafka.admin import AIOKafkaAdminClient  # type: ignore[import-untyped]
from aiokafka.partitioner import DefaultPartitioner  # type: ignore[import-untyped]


async def _described(bootstrap: str, group: str) -> tuple[str, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        [response] = await admin.describe_consumer_groups([group])
        [described] = response.groups
        return str(described[2]), len(described[5])
    finally:
        await admin.close()


def wait_for_stable_group(bootstrap: str, group: str, members: int, timeout_s: float) -> None:
    """Until the group is Stable with ``members`` members (every replica has joined and got its partitions)."""
    deadline = time.monotonic() + timeout_s
    seen: tuple[str, int] = ("unknown", 0)
    while time.monotonic() < deadline:
        seen = asyncio.run(_described(bootstrap, group))
        if seen == ("Stable", members):
            return
        time.sleep(0.5)
    raise AssertionError(f"group {group} is {seen[0]} with {seen[1]} members, not Stable with {members}")


def partition_of(key: str, partitions: int) -> int:
    """The partition the producers' default partitioner picks for ``key`` (murmur2, as Kafka's Java client)."""
    return int(DefaultPartitioner()(key.encode(), list(range(partitions)), list(range(partitions))))
