"""The context service with two Kafka connections over two real brokers: ModelGuard's bus on one, DataHub's MCL
topic on the other (``MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP``). An MCL produced on DataHub's broker reaches the
service's intake through its second consumer; what it leads to, the upstream risk and the dead letter of a broken
record, is published on the bus, and nothing is written to DataHub's broker. An MCL topic named as ModelGuard's own
(where its datahub-actions action forwards MCLs) is read on the bus."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from contracts.registry import DEAD_LETTER_TOPIC, all_topics, contract_for
from libs.bus.embedded_broker import start_embedded_broker
from libs.bus.headers import DLQ_REASON, DLQ_SOURCE
from libs.bus.producer import publish_raw
from libs.bus.runtime import ServiceRuntime
from libs.bus.topics import ensure_topics
from libs.events.codec import open_envelope
from libs.settings import load_settings
from modelguard.emit_mcl import OFFLINE_SCHEMA_ID, encode_change
from modelguard.stack import SCENARIOS
from services.context.bootstrap import bootstrap as context_service
from tests.support.broker import broker_topics
from tests.support.hand_started_runtime import stop_runtime
from tests.support.kafka_reader import read_topic
from tests.support.running_stack import environment
from tests.support.sample_events import Keys

pytestmark = pytest.mark.broker

SCENARIO = SCENARIOS / "churn-monthly-spend" / "datahub"
TOPIC = "MetadataChangeLog_Versioned_v1"
FORWARDED = "modelguard.datahub-actions-mcl.v1"
MCL_GROUP = "modelguard-context-datahub-mcl"


async def _committed(bootstrap: str, group: str, partition: TopicPartition) -> int | None:
    probe = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await probe.start()
    try:
        committed: int | None = await probe.committed(partition)
        return committed
    finally:
        await probe.stop()


@pytest.mark.timeout(300)
def test_an_mcl_on_datahubs_broker_reaches_the_context_service_and_what_it_leads_to_goes_to_the_bus(
    tmp_path: Path,
) -> None:
    bus = start_embedded_broker(tmp_path / "bus.log")
    datahub = start_embedded_broker(tmp_path / "datahub.log")
    env = {
        "MODELGUARD_HOME": str(tmp_path / "home"),
        "MODELGUARD_KAFKA_BOOTSTRAP": bus.bootstrap,
        "MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP": datahub.bootstrap,
        "MODELGUARD_MCL_TOPICS": f"{TOPIC},{FORWARDED}",
        "MODELGUARD_MCL_START": "earliest",
        "MODELGUARD_CONTEXT_PROVIDER": "file",
        "MODELGUARD_DATAHUB_FILES": str(SCENARIO / "metadata.json"),
        "MODELGUARD_DATAHUB_CHANGES": "",
    }
    with environment(env):
        settings = load_settings()
    assert settings.kafka.bootstrap == bus.bootstrap and settings.mcl_kafka.bootstrap == datahub.bootstrap
    keys = Keys("context")
    change_file, metadata = SCENARIO / "changes" / "rename-account-age.yaml", SCENARIO / "metadata.json"
    change, urn = encode_change(change_file, [metadata], OFFLINE_SCHEMA_ID)
    broken = b"\x00\x00\x00\x00\x01not avro at all"
    risk_topic = contract_for("UpstreamRiskDetected").topic

    async def scenario() -> None:
        await ensure_topics(bus.bootstrap, [*all_topics(), FORWARDED], 1)
        await ensure_topics(datahub.bootstrap, [TOPIC], 1)
        runtime = ServiceRuntime(context_service(settings, keys["context"]), settings, keys["context"], keys.registry)
        assert runtime.external_broker is not None and len(runtime.brokers) == 2
        for broker in runtime.brokers:
            await broker.start()
        await runtime._announce_ready()
        try:
            await publish_raw(datahub.bootstrap, TOPIC, change, key=urn.encode())
            await publish_raw(datahub.bootstrap, TOPIC, broken, key=b"broken")
            await publish_raw(bus.bootstrap, FORWARDED, b"{not json", key=b"forwarded")
            risks = await asyncio.to_thread(read_topic, bus.bootstrap, risk_topic, 1, 120.0)
            letters = await asyncio.to_thread(read_topic, bus.bootstrap, DEAD_LETTER_TOPIC, 2, 60.0)
            [risk] = [open_envelope(r.value, keys.registry).event for r in risks]
            assert risk.meta.event_type == "UpstreamRiskDetected" and risk.payload.asset_urn == urn
            sources = {}
            for letter in letters:
                headers = {k: v.decode() for k, v in letter.headers}
                assert headers[DLQ_REASON].startswith("mcl-"), headers
                sources[headers[DLQ_SOURCE]] = letter.value
            assert sources == {f"{TOPIC}/0@1": broken, f"{FORWARDED}/0@0": b"{not json"}
            # the MCL consumer's group lives on DataHub's broker: both records were read there and settled
            partition = TopicPartition(TOPIC, 0)
            assert await _until_committed(datahub.bootstrap, partition, 2), "DataHub's offsets were not committed"
            assert runtime.health.ready
        finally:
            await stop_runtime(runtime)
        # nothing of ModelGuard's on DataHub's broker, and no MCL topic on the bus
        assert await broker_topics(datahub.bootstrap) == {TOPIC}
        assert TOPIC not in await broker_topics(bus.bootstrap)

    async def _until_committed(bootstrap: str, partition: TopicPartition, offset: int) -> bool:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if await _committed(bootstrap, MCL_GROUP, partition) == offset:
                return True
            await asyncio.sleep(0.5)
        return False

    try:
        asyncio.run(scenario())
    finally:
        bus.stop()
        datahub.stop()
