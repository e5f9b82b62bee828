"""The detector's consumer of the dead-letter topic: every refused input of an incident goes into its
DeadLetterLog, which the verdict reads (services.detector.ingest_verdict).

Its own consumer group (`modelguard-detector-dead-letters`), from the earliest offset, committed after the
record is kept: a restarted detector neither loses a dead letter nor keeps one twice.
"""

from __future__ import annotations

import asyncio
from typing import Any

from faststream import AckPolicy
from faststream.kafka.annotations import KafkaMessage

from contracts.registry import DEAD_LETTER_TOPIC
from libs.bus.dead_letters import dead_letter_of
from libs.bus.runtime import ServiceRuntime
from services.detector.dead_letter_log import DeadLetterLog


def watch_dead_letters(runtime: ServiceRuntime, log: DeadLetterLog) -> None:
    settings = runtime.settings

    async def on_dead_letter(msg: KafkaMessage) -> None:
        record: Any = msg.raw_message
        letter = dead_letter_of(record.key, record.value, record.headers)
        await asyncio.to_thread(log.record, f"{record.topic}/{record.partition}@{record.offset}", letter)

    runtime.broker.subscriber(
        DEAD_LETTER_TOPIC,
        group_id=f"modelguard-{runtime.definition.name}-dead-letters",
        auto_offset_reset="earliest",
        session_timeout_ms=settings.kafka_session_timeout_ms,
        heartbeat_interval_ms=max(500, settings.kafka_session_timeout_ms // 4),
        ack_policy=AckPolicy.NACK_ON_ERROR,
    )(on_dead_letter)
    runtime.app.after_shutdown(log.close)  # after the broker stopped: no record is being kept any more
