"""How a service runtime is wired to the two connections, without a broker: the bus's FastStream broker carries the
bus's security; with DataHub's Kafka apart, a second broker with DataHub's security holds the external consumers
(and the start policy's probe uses it too), the bus keeps the rest; without, one broker holds everything. Readiness
needs every connection."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faststream.kafka import KafkaBroker

from contracts.service_channels import SERVICE_CHANNELS
from libs.bus.external_input import ExternalInput
from libs.bus.runtime import ServiceDefinition, ServiceRuntime
from libs.settings import Settings, load_settings
from tests.support.running_stack import environment
from tests.support.sample_events import Keys

BUS = {
    "MODELGUARD_KAFKA_BOOTSTRAP": "bus-kafka:9092",
    "MODELGUARD_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
    "MODELGUARD_KAFKA_SASL_MECHANISM": "SCRAM-SHA-256",
    "MODELGUARD_KAFKA_SASL_USERNAME": "modelguard",
    "MODELGUARD_KAFKA_SASL_PASSWORD": "bus-password",
}
DATAHUB = {
    "MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP": "datahub-kafka:9093",
    "MODELGUARD_DATAHUB_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
    "MODELGUARD_DATAHUB_KAFKA_SASL_MECHANISM": "PLAIN",
    "MODELGUARD_DATAHUB_KAFKA_SASL_USERNAME": "api-key",
    "MODELGUARD_DATAHUB_KAFKA_SASL_PASSWORD": "api-secret",
}


def _settings(tmp_path: Path, values: dict[str, str]) -> Settings:
    cleared = {k: "" for k in os.environ if k.startswith(("MODELGUARD_KAFKA_", "MODELGUARD_DATAHUB_KAFKA_"))}
    with environment({**cleared, "MODELGUARD_HOME": str(tmp_path / "home"), **values}):
        return load_settings()


@pytest.fixture
def runtime_for(tmp_path: Path) -> Iterator[Any]:
    made: list[ServiceRuntime] = []

    def make(values: dict[str, str], topics: tuple[str, ...] = ("MetadataChangeLog_Versioned_v1",)) -> ServiceRuntime:
        keys = Keys("context")
        mcl = ExternalInput("datahub-mcl", topics, handle=lambda raw, position: [])
        definition = ServiceDefinition(
            "context", "test", SERVICE_CHANNELS["context"], sink=lambda event: None, external=(mcl,)
        )
        runtime = ServiceRuntime(definition, _settings(tmp_path, values), keys["context"], keys.registry)
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        runtime.processed.close()


def _client_options(broker: KafkaBroker) -> dict[str, Any]:
    builder: Any = broker.config.broker_config.builder  # functools.partial: the aiokafka consumer subscribers get
    return dict(builder.keywords)


def _topics(broker: KafkaBroker) -> set[str]:
    subscribers: list[Any] = list(broker.subscribers)
    return {getattr(topic, "name", topic) for subscriber in subscribers for topic in subscriber.topics}


def test_datahubs_kafka_apart_gets_its_own_broker_with_its_own_security(runtime_for: Any) -> None:
    runtime = runtime_for({**BUS, **DATAHUB})
    assert runtime.external_broker is not None
    assert runtime.brokers == [runtime.broker, runtime.external_broker] == list(runtime.app.brokers)
    bus = _client_options(runtime.broker)
    assert bus["bootstrap_servers"] == ["bus-kafka:9092"] and bus["security_protocol"] == "SASL_PLAINTEXT"
    assert (bus["sasl_mechanism"], bus["sasl_plain_username"]) == ("SCRAM-SHA-256", "modelguard")
    datahub = _client_options(runtime.external_broker)
    assert datahub["bootstrap_servers"] == ["datahub-kafka:9093"] and datahub["security_protocol"] == "SASL_SSL"
    assert (datahub["sasl_mechanism"], datahub["sasl_plain_username"]) == ("PLAIN", "api-key")
    assert datahub["ssl_context"] is not None and datahub["client_id"] == "modelguard-context-datahub"
    # read-only ACLs will do on DataHub's cluster: that broker makes no producer and no admin client
    assert runtime.external_broker.config.broker_config.consumer_only
    assert not runtime.broker.config.broker_config.consumer_only
    assert _topics(runtime.broker) == {"modelguard.regression-detected.v1"}
    assert _topics(runtime.external_broker) == {"MetadataChangeLog_Versioned_v1"}
    assert [name for name, _, _ in runtime._connections()] == ["bus", "datahub"]

    async def probe_options() -> tuple[str, str]:
        [subscriber] = runtime.external_broker.subscribers
        probe = subscriber._listener._probe()  # the start policy's offset lookups
        await probe.stop()
        return probe._client._bootstrap_servers, probe._client._sasl_plain_username

    assert asyncio.run(probe_options()) == ("datahub-kafka:9093", "api-key")


def test_without_datahub_variables_one_broker_holds_every_consumer(runtime_for: Any) -> None:
    runtime = runtime_for(BUS)
    assert runtime.external_broker is None and runtime.brokers == [runtime.broker]
    assert _topics(runtime.broker) == {"modelguard.regression-detected.v1", "MetadataChangeLog_Versioned_v1"}
    assert [name for name, _, _ in runtime._connections()] == ["bus"]


def test_an_external_topic_named_as_ours_is_read_on_the_bus_the_others_on_datahubs_kafka(
    runtime_for: Any, tmp_path: Path
) -> None:
    """ModelGuard's datahub-actions action forwards MCLs to ``modelguard.datahub-actions-mcl.v1`` on the bus."""
    runtime = runtime_for({**BUS, **DATAHUB}, ("MetadataChangeLog_Versioned_v1", "modelguard.datahub-actions-mcl.v1"))
    assert _topics(runtime.external_broker) == {"MetadataChangeLog_Versioned_v1"}
    assert _topics(runtime.broker) == {"modelguard.regression-detected.v1", "modelguard.datahub-actions-mcl.v1"}

    async def probes() -> list[str]:
        subscribers = [*runtime.external_broker.subscribers, *runtime.broker.subscribers]
        probes = [s._listener._probe() for s in subscribers if s._listener is not None]
        for probe in probes:
            await probe.stop()
        return [probe._client._bootstrap_servers for probe in probes]

    assert asyncio.run(probes()) == ["datahub-kafka:9093", "bus-kafka:9092"]
    only_ours = runtime_for({**BUS, **DATAHUB}, ("modelguard.datahub-actions-mcl.v1",))
    assert only_ours.external_broker is None, "nothing to read on DataHub's Kafka: no second broker"


def test_the_service_is_ready_only_while_every_connection_answers(runtime_for: Any) -> None:
    runtime = runtime_for({**BUS, **DATAHUB})
    runtime._set_ready(True)
    assert runtime.health.ready
    runtime._set_ready(False, "datahub")
    assert not runtime.health.ready
    runtime._set_ready(False, "bus")
    runtime._set_ready(True, "datahub")
    assert not runtime.health.ready, "the bus is still away"
    runtime._set_ready(True, "bus")
    assert runtime.health.ready


def _fetch_waits(broker: KafkaBroker) -> list[Any]:
    subscribers: list[Any] = list(broker.subscribers)
    return [subscriber._connection_args.get("fetch_max_wait_ms") for subscriber in subscribers]


def _fetch_wait_by_topic(broker: KafkaBroker) -> dict[str, Any]:
    subscribers: list[Any] = list(broker.subscribers)
    return {
        getattr(topic, "name", topic): subscriber._connection_args.get("fetch_max_wait_ms")
        for subscriber in subscribers
        for topic in subscriber.topics
    }


def test_the_input_consumer_uses_the_configured_fetch_wait_and_the_external_ones_keep_kafkas(runtime_for: Any) -> None:
    # the input's wait sets each hop's latency on the embedded broker (it finds a record only at a waiting fetch's
    # next look); the MCL consumers read in batches and keep 500 ms, Kafka's default, on either connection
    apart = runtime_for({**BUS, **DATAHUB, "MODELGUARD_KAFKA_FETCH_MAX_WAIT_MS": "40"})
    assert _fetch_waits(apart.broker) == [40]
    assert apart.external_broker is not None and _fetch_waits(apart.external_broker) == [500]
    together = runtime_for({**BUS, "MODELGUARD_KAFKA_FETCH_MAX_WAIT_MS": "40"})
    waits = _fetch_wait_by_topic(together.broker)
    assert waits.pop("MetadataChangeLog_Versioned_v1") == 500
    assert set(waits.values()) == {40}  # the context service's inputs
    assert _fetch_waits(runtime_for(BUS).broker) == [500, 500]


def test_a_batch_sink_keeps_kafkas_fetch_wait(tmp_path: Path) -> None:
    # the ledger records what the handlers published: no incident waits on it, so it does not poll the broker often
    keys = Keys("ledger")
    definition = ServiceDefinition(
        "ledger", "test", SERVICE_CHANNELS["ledger"], sink=lambda event: None, batch_sink=lambda events: events
    )
    runtime = ServiceRuntime(
        definition,
        _settings(tmp_path, {**BUS, "MODELGUARD_KAFKA_FETCH_MAX_WAIT_MS": "40"}),
        keys["ledger"],
        keys.registry,
    )
    try:
        assert _fetch_waits(runtime.broker) == [500]
    finally:
        runtime.processed.close()
