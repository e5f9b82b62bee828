"""docker-compose's one-shot `init`: signing keys for every service and the CI reporter (kept on the shared
volume), the bundled policies, and the topics. Run once before the services; running it again changes nothing.

Kubernetes takes keys from Secrets and topics from Strimzi or the topics Job instead (see docs/deploy.md).
"""

from __future__ import annotations

import asyncio
import os

from contracts.registry import all_topics
from libs.bus.topics import ensure_topics
from libs.settings import load_settings
from libs.signing.keys import provision_keys
from modelguard.stack import CLIENTS, SERVICES, install_default_inputs


def main() -> None:
    settings = load_settings()
    registry = provision_keys([*SERVICES, *CLIENTS], settings.keys_dir)
    install_default_inputs(settings)
    replication = int(os.environ.get("MODELGUARD_KAFKA_REPLICATION") or 1)
    created = asyncio.run(ensure_topics(settings.kafka, all_topics(), settings.kafka_partitions, replication))
    print(f"init: {len(registry)} signing keys; policies in {settings.policy_dir}; {len(created)} topics created")


if __name__ == "__main__":
    main()
