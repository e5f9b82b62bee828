"""`python -m libs.bus.topics_job`: create ModelGuard's topics on a Kafka cluster that has no Strimzi operator
(the Helm chart's topic Job, topics.manager job), each with its config (retention: libs/bus/topic_config.py), and
set that config on topics that exist with another one. Their partitions and any other config are left alone.

MODELGUARD_KAFKA_BOOTSTRAP and the bus's security (``libs/bus/kafka_connection.py``), MODELGUARD_KAFKA_PARTITIONS
(default 6), MODELGUARD_KAFKA_REPLICATION (default 3), MODELGUARD_TOPIC_CONFIG_FILE (the chart's per-topic config,
JSON; default: libs/bus/topic_config.py's). DataHub's MCL topics are DataHub's: never created here.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from aiokafka.errors import KafkaError

from contracts.registry import all_topics
from libs.bus.kafka_connection import KafkaConnection
from libs.bus.topic_config import (
    TopicConfigError,
    TopicConfigs,
    config_drift,
    default_topic_configs,
    read_topic_configs,
)
from libs.bus.topics import TopicAdminError, ensure_topics, set_topic_configs, topic_configs
from libs.settings import SettingsError, load_topics_job_settings


async def _run(
    bus: KafkaConnection, configs: TopicConfigs, partitions: int, replication: int
) -> tuple[list[str], TopicConfigs]:
    created = await ensure_topics(bus, all_topics(), partitions, replication, configs)
    existing = [t for t in all_topics() if t not in created]
    current = await topic_configs(bus, existing)
    drifted = {t: configs[t] for t in existing if config_drift(configs[t], current.get(t, {}))}
    if drifted:
        await set_topic_configs(bus, drifted)
    return created, drifted


def main() -> int:
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)  # the one line below says what went wrong
    try:
        settings = load_topics_job_settings()
    except SettingsError as exc:  # the bus's security, a count: one line
        print(f"topics: {exc}", file=sys.stderr)
        return 2
    bootstrap = settings.bus.describe()
    try:
        configs = read_topic_configs(settings.config_file, all_topics()) if settings.config_file else None
    except TopicConfigError as exc:
        print(f"topics: {exc}", file=sys.stderr)
        return 2
    try:
        created, changed = asyncio.run(
            _run(
                settings.bus, configs or default_topic_configs(all_topics()), settings.partitions, settings.replication
            )
        )
    except (KafkaError, OSError, TopicAdminError) as exc:
        print(f"topics: cannot create topics or set their config on {bootstrap}: {exc}", file=sys.stderr)
        return 1
    print(f"topics: created {len(created)} of {len(all_topics())} on {bootstrap}: {', '.join(created) or 'none'}")
    if changed:
        print(f"topics: config set on {len(changed)} existing: {', '.join(sorted(changed))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
