"""`python -m libs.bus.topics_job`: create ModelGuard's topics on a Kafka cluster that has no Strimzi operator
(the Kubernetes Job and the docker-compose `topics` service). Existing topics are left alone.

MODELGUARD_KAFKA_BOOTSTRAP and the bus's security (``libs/bus/kafka_connection.py``), MODELGUARD_KAFKA_PARTITIONS
(default 6), MODELGUARD_KAFKA_REPLICATION (default 3). DataHub's MCL topics are DataHub's: never created here.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from aiokafka.errors import KafkaError

from contracts.registry import all_topics
from libs.bus.kafka_connection import BUS_PREFIX, KafkaConnectionError, kafka_connection_from
from libs.bus.topics import ensure_topics


def main() -> int:
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)  # the one line below says what went wrong
    try:
        bus = kafka_connection_from(os.environ, BUS_PREFIX, "127.0.0.1:9092")
    except KafkaConnectionError as exc:
        print(f"topics: {exc}", file=sys.stderr)
        return 2
    bootstrap = bus.describe()
    try:
        partitions = int(os.environ.get("MODELGUARD_KAFKA_PARTITIONS") or 6)
        replication = int(os.environ.get("MODELGUARD_KAFKA_REPLICATION") or 3)
    except ValueError:
        print("topics: MODELGUARD_KAFKA_PARTITIONS and MODELGUARD_KAFKA_REPLICATION must be integers", file=sys.stderr)
        return 2
    try:
        created = asyncio.run(ensure_topics(bus, all_topics(), partitions, replication))
    except (KafkaError, OSError) as exc:
        print(f"topics: cannot create topics on {bootstrap}: {exc}", file=sys.stderr)
        return 1
    print(f"topics: created {len(created)} of {len(all_topics())} on {bootstrap}: {', '.join(created) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
