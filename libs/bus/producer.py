"""Publishing signed events from outside a service (the CI reporter, replay, tests)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiokafka import AIOKafkaProducer

from contracts.registry import contract_for
from libs.bus.doorbell import Doorbells
from libs.bus.headers import event_headers
from libs.bus.kafka_connection import KafkaConnection, connection_to
from libs.events.codec import SignedEvent


async def _start(producer: AIOKafkaProducer) -> None:
    """Start, or close what was opened and re-raise: an unreachable broker leaves nothing dangling."""
    try:
        await producer.start()
    except BaseException:
        await producer.stop()
        raise


async def send_signed(producer: Any, events: Sequence[SignedEvent], doorbells: Doorbells | None = None) -> None:
    """Each event on its contract's topic, keyed by its incident, with the event's headers, one after the other, the
    topic's ``doorbells`` rung once it is acknowledged; ``producer``: a started ``AIOKafkaProducer``, or an in-memory
    cluster's (``libs/bus/in_memory_kafka.py``)."""
    for signed in events:
        topic = contract_for(signed.event.meta.event_type).topic
        await producer.send_and_wait(
            topic,
            signed.envelope_bytes,
            key=signed.event.meta.incident_id.encode(),
            headers=[(k, v.encode()) for k, v in event_headers(signed).items()],
        )
        if doorbells is not None:
            doorbells.ring(topic)


async def publish_signed(
    target: KafkaConnection | str,
    events: Sequence[SignedEvent],
    idempotence: bool = False,
    doorbells: Doorbells | None = None,
) -> None:
    """``doorbells``: those of the stack's services on its embedded broker (``modelguard.stack.stack_doorbells``)."""
    producer = AIOKafkaProducer(
        **connection_to(target).client_options(), enable_idempotence=idempotence, max_request_size=8 * 1024 * 1024
    )
    await _start(producer)
    try:
        await send_signed(producer, events, doorbells)
    finally:
        await producer.stop()


async def publish_raw(target: KafkaConnection | str, topic: str, value: bytes, key: bytes | None = None) -> None:
    """Put arbitrary bytes on a topic: how tests feed a service malformed input, and ``emit-mcl`` an MCL."""
    producer = AIOKafkaProducer(**connection_to(target).client_options())
    await _start(producer)
    try:
        await producer.send_and_wait(topic, value, key=key)
    finally:
        await producer.stop()
