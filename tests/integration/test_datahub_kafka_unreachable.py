"""Each connection is watched on its own: when DataHub's Kafka goes away, the context service stops its MCL
consumers only (its consumer of the bus keeps running), turns not ready, and when a broker answers at DataHub's
address again starts them, turns ready and reads the MCL topic there. Two real embedded brokers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contracts.registry import all_topics
from contracts.service_channels import SERVICE_CHANNELS
from libs.bus.embedded_broker import free_loopback_port, start_embedded_broker
from libs.bus.external_input import ExternalInput, InputPosition
from libs.bus.producer import publish_raw
from libs.bus.runtime import ServiceDefinition, ServiceRuntime
from libs.bus.topics import ensure_topics
from libs.settings import load_settings
from tests.support.hand_started_runtime import run_over_brokers, stop_runtime
from tests.support.running_stack import environment
from tests.support.sample_events import Keys
from tests.support.waiting import until

pytestmark = pytest.mark.broker

TOPIC = "MetadataChangeLog_Versioned_v1"


def _consuming(subscribers: Any) -> bool:
    return all(getattr(s, "consumer", None) is not None for s in subscribers)


def _stopped(subscribers: Any) -> bool:
    return all(getattr(s, "consumer", None) is None for s in subscribers)


@pytest.mark.timeout(300)
def test_datahubs_kafka_away_stops_only_the_mcl_consumers_until_it_answers_again(tmp_path: Path) -> None:
    bus = start_embedded_broker(tmp_path / "bus.log")
    port = free_loopback_port()
    brokers = [bus, start_embedded_broker(tmp_path / "datahub-1.log", port=port)]
    env = {
        "MODELGUARD_HOME": str(tmp_path / "home"),
        "MODELGUARD_KAFKA_BOOTSTRAP": bus.bootstrap,
        "MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP": brokers[1].bootstrap,
        "MODELGUARD_MCL_TOPICS": TOPIC,
        "MODELGUARD_MCL_START": "earliest",
    }
    with environment(env):
        settings = load_settings()
    keys = Keys("context")
    read: list[bytes] = []

    def handle(raw: bytes, position: InputPosition) -> list[Any]:
        read.append(raw)
        return []

    mcl = ExternalInput("datahub-mcl", (TOPIC,), handle=handle)
    definition = ServiceDefinition("context", "test", SERVICE_CHANNELS["context"], sink=lambda e: None, external=(mcl,))

    async def scenario() -> None:
        await ensure_topics(bus.bootstrap, all_topics(), 1)
        await ensure_topics(brokers[1].bootstrap, [TOPIC], 1)
        runtime = ServiceRuntime(definition, settings, keys["context"], keys.registry)
        external = runtime.external_broker
        assert external is not None
        for broker in runtime.brokers:
            await broker.start()
        await runtime._announce_ready()
        try:
            await publish_raw(brokers[1].bootstrap, TOPIC, b"before")
            assert await until(lambda: read == [b"before"], 60), read

            brokers[1].stop()
            assert await until(lambda: not runtime.health.ready, 30), "never noticed DataHub's Kafka was gone"
            assert await until(lambda: _stopped(external.subscribers), 60), "MCL consumers left"
            assert _consuming(runtime.broker.subscribers), "the bus's consumer must keep running"

            brokers.append(start_embedded_broker(tmp_path / "datahub-2.log", port=port))
            await ensure_topics(brokers[-1].bootstrap, [TOPIC], 1)
            assert await until(lambda: runtime.health.ready, 60), "never resumed on DataHub's new broker"
            assert _consuming(external.subscribers)
            await publish_raw(brokers[-1].bootstrap, TOPIC, b"after")
            assert await until(lambda: read == [b"before", b"after"], 60), read
        finally:
            await stop_runtime(runtime)

    run_over_brokers(scenario, brokers)
