"""The ledger service's consumer of the dead-letter topic: every dead letter kept as an unsigned operational row
in the ledger's database (``libs/operations/dead_letter_store.py``), where the console reads them.

Its own consumer group (``modelguard-ledger-dead-letters``), from the earliest offset, committed after the row is
written: a restarted ledger neither loses a dead letter nor keeps one twice. The database away: the record is
not acknowledged and comes again a second later; a dead letter is never dropped for an outage.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from faststream import AckPolicy
from faststream.kafka.annotations import KafkaMessage
from sqlalchemy.exc import OperationalError

from contracts.registry import DEAD_LETTER_TOPIC
from libs.bus.dead_letters import dead_letter_of
from libs.bus.runtime import MAX_MESSAGE_BYTES, ServiceRuntime
from libs.operations.dead_letter_store import DeadLetterStore, keepable

log = logging.getLogger("modelguard.ledger")
RETRY_AFTER_S = 1.0
GROUP_SUFFIX = "dead-letters"


def record_time(timestamp_ms: object) -> datetime | None:
    """The record's Kafka timestamp, when it is one (a broker may hand back -1 or nothing)."""
    if not isinstance(timestamp_ms, int) or timestamp_ms <= 0:
        return None
    try:
        return datetime.fromtimestamp(timestamp_ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def keep_record(store: DeadLetterStore, record: Any) -> bool:
    """One record of the dead-letter topic (an aiokafka ``ConsumerRecord``) kept; False when it was already."""
    letter = dead_letter_of(record.key, record.value, record.headers)
    position = f"{record.topic}/{record.partition}@{record.offset}"
    kept = store.keep(position, letter, record_time(record.timestamp))
    if kept:
        log.info("kept dead letter %s: %s from %s", position, keepable(letter.reason, 80), keepable(letter.service, 40))
    return kept


def keep_dead_letters(runtime: ServiceRuntime) -> None:
    """Subscribe the ledger service to the dead-letter topic; ``serve``'s ``extend`` hook."""
    store = DeadLetterStore(runtime.settings.ledger_url)
    store.create_schema()
    settings = runtime.settings

    async def on_dead_letter(msg: KafkaMessage) -> None:
        record: Any = msg.raw_message
        try:
            await asyncio.to_thread(keep_record, store, record)
        except OperationalError as exc:  # the database is away: not acknowledged, so it comes again
            log.warning("a dead letter is not kept yet (the database does not answer): %s", type(exc).__name__)
            await asyncio.sleep(RETRY_AFTER_S)
            raise

    runtime.broker.subscriber(
        DEAD_LETTER_TOPIC,
        group_id=f"modelguard-{runtime.definition.name}-{GROUP_SUFFIX}",
        auto_offset_reset="earliest",
        session_timeout_ms=settings.kafka_session_timeout_ms,
        heartbeat_interval_ms=max(500, settings.kafka_session_timeout_ms // 4),
        ack_policy=AckPolicy.NACK_ON_ERROR,
        max_partition_fetch_bytes=MAX_MESSAGE_BYTES,  # a dead letter is as large as the input it keeps
    )(on_dead_letter)
    runtime.app.after_shutdown(store.close)
