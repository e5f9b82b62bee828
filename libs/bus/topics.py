"""Explicit topic creation: never rely on broker auto-creation (Tansu gives 4 partitions, Kafka may refuse)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from libs.bus.kafka_connection import KafkaConnection, connection_to


async def ensure_topics(
    target: KafkaConnection | str,
    topics: Iterable[str],
    partitions: int,
    replication: int = 1,
    configs: Mapping[str, Mapping[str, str]] | None = None,
) -> list[str]:
    """Create the topics that do not exist yet, each with its ``configs`` entry; return the names created."""
    admin = AIOKafkaAdminClient(**connection_to(target).client_options())
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [t for t in sorted(set(topics)) if t not in existing]
        if missing:
            await admin.create_topics(
                [
                    NewTopic(
                        name=t,
                        num_partitions=partitions,
                        replication_factor=replication,
                        topic_configs=dict((configs or {}).get(t, {})),
                    )
                    for t in missing
                ]
            )
        return missing
    finally:
        await admin.close()


async def topic_configs(target: KafkaConnection | str, topics: Iterable[str]) -> dict[str, dict[str, str]]:
    """Each topic's configs as the broker describes them (name to value)."""
    admin = AIOKafkaAdminClient(**connection_to(target).client_options())
    await admin.start()
    try:
        names = sorted(set(topics))
        if not names:
            return {}
        responses = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, t) for t in names])
        described: dict[str, dict[str, str]] = {}
        for response in responses:
            for error_code, error_message, _type, name, entries in response.resources:
                if error_code:
                    raise TopicAdminError(f"describing {name}'s config: error {error_code} {error_message}")
                described[name] = {entry[0]: entry[1] for entry in entries if entry[1] is not None}
        return described
    finally:
        await admin.close()


async def set_topic_configs(target: KafkaConnection | str, configs: Mapping[str, Mapping[str, str]]) -> None:
    """Set these configs on existing topics (Kafka's AlterConfigs: the topic's other dynamic configs are reset to
    the broker's defaults, so ``configs`` holds every config ModelGuard manages)."""
    admin = AIOKafkaAdminClient(**connection_to(target).client_options())
    await admin.start()
    try:
        resources = [ConfigResource(ConfigResourceType.TOPIC, t, configs=dict(c)) for t, c in configs.items()]
        for response in await admin.alter_configs(resources):
            for error_code, error_message, _type, name in response.resources:
                if error_code:
                    raise TopicAdminError(f"setting {name}'s config: error {error_code} {error_message}")
    finally:
        await admin.close()


class TopicAdminError(RuntimeError):
    """The broker refused a topic administration request; one line."""
