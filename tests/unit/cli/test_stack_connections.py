"""What `modelguard stack up` creates and where its commands send: DataHub's MCL topics only on a broker of its own
that holds them; `submit` and `emit-mcl` use the running stack's embedded broker, else the configured connections
with their security."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from contracts.registry import all_topics
from libs.bus.kafka_connection import KafkaConnection
from libs.settings import Settings, load_settings
from modelguard.stack import (
    StackState,
    bus_connection,
    embedded_broker_environment,
    mcl_connection,
    topics_to_create,
)
from tests.support.running_stack import environment

SCRAM = KafkaConnection("kafka:9093", "SASL_PLAINTEXT", "SCRAM-SHA-512", "modelguard", "password")
DATAHUB = KafkaConnection("datahub-kafka:9092", prefix="MODELGUARD_DATAHUB_KAFKA_")


def _settings(tmp_path: Path) -> Settings:
    with environment({"MODELGUARD_HOME": str(tmp_path)}):
        return load_settings()


def test_mcl_topics_are_created_only_on_a_broker_of_our_own_that_holds_them(tmp_path: Path) -> None:
    settings = dataclasses.replace(_settings(tmp_path), mcl_topics=("MetadataChangeLog_Versioned_v1",))
    assert topics_to_create(settings, owns_broker=True) == [*all_topics(), "MetadataChangeLog_Versioned_v1"]
    assert topics_to_create(settings, owns_broker=False) == all_topics()
    apart = dataclasses.replace(settings, datahub_kafka=DATAHUB)
    assert topics_to_create(apart, owns_broker=True) == all_topics()
    # the MCLs ModelGuard's datahub-actions action forwards are on our bus: its topic is ours to create
    forwarded = dataclasses.replace(
        apart, mcl_topics=("MetadataChangeLog_Versioned_v1", "modelguard.datahub-actions-mcl.v1")
    )
    assert topics_to_create(forwarded, owns_broker=False) == [*all_topics(), "modelguard.datahub-actions-mcl.v1"]


def test_commands_use_the_stacks_embedded_broker_else_the_configured_connections(tmp_path: Path) -> None:
    settings = dataclasses.replace(_settings(tmp_path), kafka=SCRAM)
    embedded = StackState("127.0.0.1:40123", 4242, {})
    assert bus_connection(settings, embedded) == KafkaConnection("127.0.0.1:40123")
    assert bus_connection(settings, None) is SCRAM
    assert bus_connection(settings, StackState("kafka:9093", None, {})) is SCRAM  # a stack on the configured Kafka
    assert mcl_connection(settings, embedded) == KafkaConnection("127.0.0.1:40123")
    apart = dataclasses.replace(settings, datahub_kafka=DATAHUB)
    assert mcl_connection(apart, embedded) is DATAHUB and mcl_connection(apart, None) is DATAHUB


def test_the_embedded_bus_drops_the_bus_security_and_reads_mcl_from_the_start_only_when_it_holds_them(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path)
    env = {"MODELGUARD_KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "MODELGUARD_KAFKA_SASL_USERNAME": "mg", "OTHER": "kept"}
    embedded_broker_environment(settings, env)
    assert env == {"OTHER": "kept", "MODELGUARD_MCL_START": "earliest"}
    # DataHub's own Kafka holds history: the start policy stays what it is (latest unless set)
    env = {"MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP": "datahub-kafka:9092"}
    embedded_broker_environment(dataclasses.replace(settings, datahub_kafka=DATAHUB), env)
    assert env == {"MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP": "datahub-kafka:9092"}
