"""What `modelguard stack up` creates and where its commands send: DataHub's MCL topics only on a broker of its own
that holds them; `submit` and `emit-mcl` use the running stack's embedded broker, else the configured connections
with their security."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from contracts.registry import all_topics
from libs.bus.kafka_connection import KafkaConnection
from libs.settings import (
    DOORBELLS_ENV,
    EMBEDDED_FETCH_MAX_WAIT_MS,
    FETCH_MAX_WAIT_ENV,
    Settings,
    SettingsError,
    load_settings,
)
from modelguard.stack import (
    StackState,
    bus_connection,
    embedded_broker_environment,
    mcl_connection,
    owned_broker_environment,
    stack_doorbells,
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
    assert env == {"OTHER": "kept", "MODELGUARD_MCL_START": "earliest", FETCH_MAX_WAIT_ENV: "100"}
    # DataHub's own Kafka holds history: the start policy stays what it is (latest unless set)
    env = {"MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP": "datahub-kafka:9092"}
    embedded_broker_environment(dataclasses.replace(settings, datahub_kafka=DATAHUB), env)
    assert env == {"MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP": "datahub-kafka:9092", FETCH_MAX_WAIT_ENV: "100"}


def test_the_embedded_bus_gets_a_short_fetch_wait_unless_one_is_set(tmp_path: Path) -> None:
    # Tansu finds a record only at a waiting fetch's next look: Kafka's 500 ms would make each hop up to 250 ms
    settings = _settings(tmp_path)
    assert settings.kafka_fetch_max_wait_ms == 500  # Kafka's own default: it answers as soon as a record arrives
    env: dict[str, str] = {}
    embedded_broker_environment(settings, env)
    assert env[FETCH_MAX_WAIT_ENV] == str(EMBEDDED_FETCH_MAX_WAIT_MS)
    with environment({"MODELGUARD_HOME": str(tmp_path), **env}):
        assert load_settings().kafka_fetch_max_wait_ms == EMBEDDED_FETCH_MAX_WAIT_MS
    env = {FETCH_MAX_WAIT_ENV: "200"}
    embedded_broker_environment(settings, env)
    assert env[FETCH_MAX_WAIT_ENV] == "200"


@pytest.mark.parametrize("value", ["soon", "0", "-5", "60001"])
def test_a_fetch_wait_out_of_range_is_refused_in_one_line(tmp_path: Path, value: str) -> None:
    with (
        environment({"MODELGUARD_HOME": str(tmp_path), FETCH_MAX_WAIT_ENV: value}),
        pytest.raises(SettingsError, match=FETCH_MAX_WAIT_ENV),
    ):
        load_settings()


def test_on_a_broker_of_its_own_the_services_wait_for_doorbells_unless_switched_off(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    assert settings.bus_doorbells is None  # on Kafka: nothing is rung, the fetch wait is the broker's
    env: dict[str, str] = {}
    owned_broker_environment(settings, env)
    assert env == {DOORBELLS_ENV: str(tmp_path / "run" / "doorbells")}
    with environment({"MODELGUARD_HOME": str(tmp_path), **env}):
        assert load_settings().bus_doorbells == tmp_path / "run" / "doorbells"
    off = {DOORBELLS_ENV: ""}
    owned_broker_environment(settings, off)
    assert off == {DOORBELLS_ENV: ""}
    with environment({"MODELGUARD_HOME": str(tmp_path), **off}):
        assert load_settings().bus_doorbells is None


def test_a_command_rings_the_running_stacks_doorbells_only(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    assert stack_doorbells(settings, None).folder is None
    running = StackState("127.0.0.1:40123", 4242, {})
    assert stack_doorbells(settings, running).folder == tmp_path / "run" / "doorbells"
    with environment({DOORBELLS_ENV: ""}):
        assert stack_doorbells(settings, running).folder is None
