"""A service whose broker goes away stops reconnecting (its consumers are closed, one probe on a growing
backoff), turns not ready, and when a broker answers at the address again starts its consumers, turns ready
and handles what is sent there. A real service runtime over the embedded broker, killed and started again."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiokafka.client
import pytest

from contracts.registry import all_topics
from contracts.service_channels import ServiceChannels
from libs.bus.embedded_broker import free_loopback_port, start_embedded_broker
from libs.bus.kafka_connection import KafkaConnection
from libs.bus.producer import publish_signed
from libs.bus.runtime import ServiceDefinition, ServiceRuntime
from libs.bus.topics import ensure_topics
from libs.events.codec import SignedEvent
from libs.settings import load_settings
from libs.signing.keys import provision_keys
from tests.support.hand_started_runtime import run_over_brokers, stop_runtime
from tests.support.running_stack import environment
from tests.support.sample_events import Keys, reported
from tests.support.waiting import until

pytestmark = pytest.mark.broker


@pytest.mark.timeout(300)
def test_a_service_stops_reconnecting_while_its_broker_is_away_and_resumes_when_one_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"):
        pytest.skip("stops the embedded broker; an external Kafka is not ours to stop")
    attempts: list[float] = []
    connect = aiokafka.client.create_conn

    async def counted(*args: Any, **kwargs: Any) -> Any:
        attempts.append(time.monotonic())
        return await connect(*args, **kwargs)

    monkeypatch.setattr(aiokafka.client, "create_conn", counted)
    keys = Keys("reporter", "probe")
    handled: list[str] = []

    def sink(event: SignedEvent) -> None:
        handled.append(event.event.payload.run_id)

    port = free_loopback_port()
    first = start_embedded_broker(tmp_path / "broker-1.log", port=port)
    brokers = [first]
    with environment({"MODELGUARD_HOME": str(tmp_path / "home")}):
        settings = dataclasses.replace(load_settings(), kafka=KafkaConnection(first.bootstrap))

    async def scenario() -> None:
        await ensure_topics(first.bootstrap, all_topics(), 1)
        definition = ServiceDefinition(
            "probe", "test", ServiceChannels("a probe", consumes=("EvaluationReported",)), sink=sink
        )
        runtime = ServiceRuntime(definition, settings, keys["probe"], keys.registry)
        await runtime.broker.start()
        await runtime._announce_ready()
        try:
            await publish_signed(first.bootstrap, [reported(keys, run_id="before", seed="a")])
            assert await until(lambda: handled == ["before"], 60), handled

            first.stop()
            assert await until(lambda: not runtime.health.ready, 30), "never noticed the broker was gone"
            # readiness turns false first, then the consumers are closed: wait for the close to finish
            assert await until(
                lambda: all(getattr(s, "consumer", None) is None for s in runtime.broker.subscribers), 60
            ), "the consumers were never closed"
            quiet_from = len(attempts)
            await asyncio.sleep(8.0)
            # before: every consumer loop reconnected every 100 ms, about 400 attempts in these 8 s; now only the
            # producer's metadata refresh may try once
            assert len(attempts) - quiet_from <= 2, f"{len(attempts) - quiet_from} Kafka connections while away"

            second = start_embedded_broker(tmp_path / "broker-2.log", port=port)
            brokers.append(second)
            await ensure_topics(second.bootstrap, all_topics(), 1)
            assert await until(lambda: runtime.health.ready, 60), "never resumed on the new broker"
            await publish_signed(second.bootstrap, [reported(keys, run_id="after", seed="b")])
            assert await until(lambda: handled == ["before", "after"], 60), handled
        finally:
            await stop_runtime(runtime)

    run_over_brokers(scenario, brokers)


def test_a_service_started_with_no_broker_says_so_in_one_line_and_exits_for_its_supervisor(tmp_path: Path) -> None:
    provision_keys(["ledger"], tmp_path / "home" / "keys")
    env = {**os.environ, "MODELGUARD_HOME": str(tmp_path / "home"), "MODELGUARD_KAFKA_BOOTSTRAP": "127.0.0.1:1"}
    done = subprocess.run(
        [sys.executable, "-m", "services.ledger.main"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 3, done.stderr[-2000:]
    assert "ledger: no Kafka broker answers at 127.0.0.1:1" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_service_started_without_its_signing_key_says_so_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "MODELGUARD_HOME": str(tmp_path / "home"), "MODELGUARD_KAFKA_BOOTSTRAP": "127.0.0.1:1"}
    done = subprocess.run(
        [sys.executable, "-m", "services.ledger.main"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.startswith("ledger: cannot load its signing key or the key registry: ")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("service", ["ledger", "context"])
def test_a_service_started_with_a_named_central_policy_that_is_not_there_says_so_in_one_line(
    tmp_path: Path, service: str
) -> None:
    # a ConfigMap mounted without its key, a mistyped path: the service refuses, it does not run on the code's
    # defaults (the ledger reads the delivery section at start; the context service the MCL intake's limits too)
    provision_keys([service], tmp_path / "home" / "keys")
    missing = tmp_path / "central-policy" / "central.yaml"
    env = {
        **os.environ,
        "MODELGUARD_HOME": str(tmp_path / "home"),
        "MODELGUARD_KAFKA_BOOTSTRAP": "127.0.0.1:1",
        "MODELGUARD_CENTRAL_POLICY": str(missing),
    }
    done = subprocess.run(
        [sys.executable, "-m", f"services.{service}.main"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr == f"{service}: cannot read the central policy {missing}: No such file or directory\n"
    assert "Traceback" not in done.stderr
