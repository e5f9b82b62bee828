"""A message's acknowledgement commits only as the group member that read it (``libs/bus/member_commits``).

Over the embedded broker: a consumer reads three records, the broker is replaced by an empty one at the same address
while the message is "in hand", and the acknowledgement comes after. aiokafka's own ``commit()`` writes the dead
broker's position (3) into the new broker's group, so the next consumer skips the new broker's first records; the
member-bound commit writes nothing there. On one broker, the member-bound commit commits as before. And a real
service runtime whose handler is busy while its broker is replaced handles every input sent to the new broker (the
broker-restart e2e test lost one this way, now and then)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import threading
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import CommitFailedError

from contracts.registry import all_topics
from contracts.service_channels import ServiceChannels
from libs.bus.embedded_broker import EmbeddedBroker, free_loopback_port, start_embedded_broker
from libs.bus.kafka_connection import KafkaConnection
from libs.bus.member_commits import NO_GENERATION, MemberCommits, Membership, membership
from libs.bus.producer import publish_signed
from libs.bus.runtime import ServiceDefinition, ServiceRuntime
from libs.bus.topics import ensure_topics
from libs.events.codec import SignedEvent
from libs.settings import load_settings
from tests.support.hand_started_runtime import run_over_brokers, stop_runtime
from tests.support.running_stack import environment
from tests.support.sample_events import Keys, reported
from tests.support.waiting import until

pytestmark = pytest.mark.broker

TOPIC = "member-commits"
PARTITION = TopicPartition(TOPIC, 0)


async def _produce(broker: EmbeddedBroker, count: int) -> None:
    await ensure_topics(broker.bootstrap, [TOPIC], 1)
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await producer.start()
    try:
        for n in range(count):
            await producer.send_and_wait(TOPIC, f"record {n}".encode())
    finally:
        await producer.stop()


async def _reader(broker: EmbeddedBroker, group: str) -> AIOKafkaConsumer:
    consumer = AIOKafkaConsumer(
        TOPIC,
        bootstrap_servers=broker.bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=6_000,
        heartbeat_interval_ms=2_000,
    )
    await consumer.start()
    return consumer


async def _read(consumer: AIOKafkaConsumer, count: int) -> list[bytes]:
    values: list[bytes] = []
    async with asyncio.timeout(30):
        while len(values) < count:
            batch = await consumer.getmany(timeout_ms=1000)
            values += [record.value for records in batch.values() for record in records]
    return values


async def _committed(broker: EmbeddedBroker, group: str) -> int | None:
    return await _committed_offset(broker, group, PARTITION)


async def _committed_offset(broker: EmbeddedBroker, group: str, partition: TopicPartition) -> int | None:
    probe = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, enable_auto_commit=False)
    await probe.start()
    try:
        return await probe.committed(partition)
    finally:
        await probe.stop()


async def _acknowledge_twice(commit: object) -> None:
    """As FastStream would, acknowledgements after the broker changed: the first is refused (unknown member) and
    makes aiokafka forget its generation; the next goes out before the member joined the new broker."""
    for _ in range(2):
        try:
            await commit.commit()  # type: ignore[attr-defined]
        except CommitFailedError:
            continue


async def _across_a_new_broker(tmp_path: Path, guarded: bool) -> tuple[int | None, list[bytes]]:
    """What the new broker's group holds after the old member acknowledged, and what a new member reads there."""
    group = f"g-{'guarded' if guarded else 'plain'}"
    old = start_embedded_broker(tmp_path / f"{group}-1.log")
    brokers = [old]
    try:
        await _produce(old, 3)
        consumer = await _reader(old, group)
        try:
            assert len(await _read(consumer, 3)) == 3
            in_hand = MemberCommits(consumer, "record 2") if guarded else consumer
            old.stop()
            new = start_embedded_broker(tmp_path / f"{group}-2.log", port=old.port)
            brokers.append(new)
            await _produce(new, 2)
            await _acknowledge_twice(in_hand)
        finally:
            await consumer.stop()
        committed = await _committed(new, group)
        successor = await _reader(new, group)
        try:
            read = await _read(successor, 2) if committed is None or committed < 2 else []
        finally:
            await successor.stop()
        return committed, read
    finally:
        for broker in brokers:
            broker.stop()


@pytest.mark.timeout(180)
def test_an_acknowledgement_after_the_broker_changed_commits_nothing_there(tmp_path: Path) -> None:
    if os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"):
        pytest.skip("replaces the embedded broker")
    plain, _ = asyncio.run(_across_a_new_broker(tmp_path, guarded=False))
    assert plain == 3  # the hazard: the dead broker's position, committed past the new broker's records
    guarded, read = asyncio.run(_across_a_new_broker(tmp_path, guarded=True))
    assert guarded is None
    assert read == [b"record 0", b"record 1"]  # the new broker's records, none skipped


@pytest.mark.timeout(120)
def test_on_one_broker_the_member_commits_what_it_read(tmp_path: Path) -> None:
    async def scenario() -> tuple[int | None, bool]:
        broker = start_embedded_broker(tmp_path / "broker.log")
        try:
            await _produce(broker, 2)
            consumer = await _reader(broker, "one-broker")
            try:
                await _read(consumer, 2)
                in_hand = MemberCommits(consumer, "record 1")
                await in_hand.commit()
                return await _committed(broker, "one-broker"), membership(consumer) is not None
            finally:
                await consumer.stop()
        finally:
            broker.stop()

    committed, has_membership = asyncio.run(scenario())
    assert has_membership  # aiokafka's private state is where member_commits reads it
    assert committed == 2


@pytest.mark.timeout(300)
def test_a_service_busy_while_its_broker_is_replaced_handles_every_input_of_the_new_broker(tmp_path: Path) -> None:
    if os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"):
        pytest.skip("replaces the embedded broker")
    keys = Keys("reporter", "probe")
    handled: list[str] = []
    entered, release = threading.Event(), threading.Event()

    def sink(event: SignedEvent) -> None:
        run_id = event.event.payload.run_id
        if run_id == "in-hand":
            entered.set()
            release.wait(120)
        handled.append(run_id)

    port = free_loopback_port()
    brokers = [start_embedded_broker(tmp_path / "broker-1.log", port=port)]
    with environment({"MODELGUARD_HOME": str(tmp_path / "home")}):
        settings = dataclasses.replace(load_settings(), kafka=KafkaConnection(brokers[0].bootstrap))

    async def scenario() -> None:
        await ensure_topics(brokers[0].bootstrap, all_topics(), 1)
        definition = ServiceDefinition(
            "probe", "test", ServiceChannels("a probe", consumes=("EvaluationReported",)), sink=sink
        )
        runtime = ServiceRuntime(definition, settings, keys["probe"], keys.registry)
        await runtime.broker.start()
        await runtime._announce_ready()
        try:
            await publish_signed(brokers[0].bootstrap, [reported(keys, run_id="in-hand", seed="a")])
            assert await until(entered.is_set, 60), "the first input was never handled"
            (consumer,) = [s.consumer for s in runtime.broker.subscribers]
            brokers[0].stop()  # while the handler has the input in hand: its position (1) is the dead broker's
            brokers.append(start_embedded_broker(tmp_path / "broker-2.log", port=port))
            await ensure_topics(brokers[1].bootstrap, all_topics(), 1)
            later = [reported(keys, run_id=f"later-{n}", seed=s) for n, s in enumerate("bc")]
            await publish_signed(brokers[1].bootstrap, later)
            # the member met the new broker: aiokafka is joining it again (the embedded broker waits half a
            # session before it answers a join), or forgot its generation when the broker did not know the member
            noticed = await until(lambda: _noticed(membership(consumer)), 60)
            assert noticed, "the consumer never noticed the new broker"
            release.set()  # the acknowledgement now would commit the dead broker's position (1) on the new one
            assert await until(lambda: {"later-0", "later-1"} <= set(handled), 90), handled
            assert handled.count("in-hand") == 1, handled
            # and what the new member read it commits there, as ever (on the current contract's topic)
            committed = {
                topic: await _committed_offset(brokers[1], "modelguard-probe", TopicPartition(topic, 0))
                for topic in definition.topics
            }
            assert sorted(committed.values()) == [0, 2], committed  # nothing on the old contract's topic
        finally:
            release.set()
            await stop_runtime(runtime)

    run_over_brokers(scenario, brokers)


def _noticed(now: Membership | None) -> bool:
    return now is not None and (now.rejoining or now.generation == NO_GENERATION)
